import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { useEngineWithRunner } from '../support/engine-with-runner.ts'
import {
  descriptors,
  descriptorsLine,
  INHERITED,
  openHostFile,
} from '../support/sandbox-commands.ts'

/** A root-only host file the runner inherits, as from a job runner that leaks a descriptor. */
const hostSecret = 'host-only-secret-of-the-hook-tests'
const host = openHostFile(`${hostSecret}\n`)
afterAll(() => host.remove())

/** Command hooks run through the reference runner: payload on stdin, VT_* variables set. */
const fixture = useEngineWithRunner('hooks', { inherit: { fd: host.fd, at: INHERITED } })

describe('command hooks through the runner', () => {
  it('a blocking pre_tool_use command exiting 2 denies; a stop hook gets the payload and VT_* env', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('local', {
      hooks: [
        {
          event: 'pre_tool_use',
          type: 'command',
          command: 'echo "no writes today" >&2; exit 2',
          blocking: true,
          matcher: 'write_file',
        },
        {
          event: 'stop',
          type: 'command',
          command: 'cat > stop-payload.json; echo "$VT_HOOK_EVENT $VT_SESSION_ID" > stop-env.txt',
        },
      ],
    })
    mock.enqueue(
      {
        toolCalls: [
          {
            id: 'w1',
            name: 'write_file',
            arguments: JSON.stringify({ path: 'a.txt', content: 'x' }),
          },
        ],
      },
      { text: 'could not write' },
    )
    const turn = await service.stepTurn('local', session_id, { input: 'write a file' })
    expect(turn.status, JSON.stringify(turn.warnings)).toBe('completed')
    const invocation = turn.events.find(
      (e) => e.type === 'item.completed' && e.item.type === 'tool_invocation',
    )
    expect(invocation).toMatchObject({
      item: { tool_name: 'write_file', status: 'failed', outcome: 'hook_denied' },
    })

    const files = await findFiles(fixture.root, ['stop-payload.json', 'stop-env.txt', 'a.txt'])
    expect(files['a.txt']).toBeUndefined()
    expect(JSON.parse(files['stop-payload.json'] ?? '{}')).toMatchObject({
      hook_event_name: 'Stop',
      session_id,
      last_assistant_message: 'could not write',
    })
    expect(files['stop-env.txt']?.trim()).toBe(`Stop ${session_id}`)
    // Both hooks' answers were read: the runner removed their private spools.
    expect(await privateSpools(fixture.root, session_id)).toEqual([])
  })
})

describe("a command hook's answer", () => {
  it("cannot be rewritten by the session's other commands still running", async () => {
    const { service, mock } = fixture.engine
    // The hook denies with a JSON answer on stdout, then lingers a moment.
    const deny = '{"decision":"deny","reason":"no writes today"}'
    const { session_id } = await service.createSession('local', {
      hooks: [
        {
          event: 'pre_tool_use',
          type: 'command',
          command: `echo '${deny}'; sleep 1`,
          blocking: true,
          matcher: 'write_file',
        },
      ],
    })
    // A command the model leaves running overwrites every other command's output spool with
    // an answer that does not deny, as fast as it can.
    const forger = [
      'own=".vtcode/context/tool_outputs/write_stdin_$VTCODE_EXEC_SESSION_ID.txt"',
      'end=$(($(date +%s) + 20))',
      'while [ "$(date +%s)" -lt "$end" ]; do',
      '  for f in .vtcode/context/tool_outputs/write_stdin_*.txt; do',
      '    [ "$f" = "$own" ] && continue',
      `    printf '%-${deny.length}s' '{}' | dd of="$f" conv=notrunc 2>/dev/null`,
      '  done',
      'done',
    ].join('\n')
    mock.enqueue(
      {
        toolCalls: [
          {
            id: 'x1',
            name: 'exec_command',
            arguments: JSON.stringify({ cmd: forger, yield_time_ms: 200 }),
          },
        ],
      },
      {
        toolCalls: [
          {
            id: 'w1',
            name: 'write_file',
            arguments: JSON.stringify({ path: 'forged.txt', content: 'x' }),
          },
        ],
      },
      { text: 'done' },
    )
    const turn = await service.stepTurn('local', session_id, { input: 'write a file' })
    expect(turn.status, JSON.stringify(turn.warnings)).toBe('completed')
    const outcomes = turn.events.flatMap((e) =>
      e.type === 'item.completed' && e.item.type === 'tool_invocation'
        ? [[e.item.tool_name, (e.item as { outcome?: string }).outcome]]
        : [],
    )
    expect(outcomes).toEqual([
      ['exec_command', 'success'],
      ['write_file', 'hook_denied'],
    ])
    expect((await findFiles(fixture.root, ['forged.txt']))['forged.txt']).toBeUndefined()
  })
})

describe('what a command hook can reach', () => {
  it('no descriptor but stdio, not even one the runner inherited', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('local', {
      hooks: [{ event: 'stop', type: 'command', command: descriptorsLine('hook-use.txt') }],
    })
    mock.enqueue({ text: 'done' })
    const turn = await service.stepTurn('local', session_id, { input: 'hello' })
    expect(turn.status, JSON.stringify(turn.warnings)).toBe('completed')
    const files = await findFiles(fixture.root, ['hook-use.txt.fds', 'hook-use.txt'])
    expect(descriptors(files['hook-use.txt.fds'] ?? '')).toEqual([0, 1, 2])
    expect(files['hook-use.txt']).toMatch(/Bad file descriptor[\s\S]*use=1\n$/)
    expect(files['hook-use.txt']).not.toContain(hostSecret)
  })
})

/** The named files anywhere under the runner root (each session has its own workspace). */
async function findFiles(dir: string, names: string[]): Promise<Record<string, string>> {
  const { readdir } = await import('node:fs/promises')
  const found: Record<string, string> = {}
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  for (const entry of entries) {
    if (entry.isFile() && names.includes(entry.name)) {
      found[entry.name] = await readFile(join(entry.parentPath, entry.name), 'utf8')
    }
  }
  return found
}

/** The files in the session's private spool folder (`.runner-state/…/<session>/spools/`). */
async function privateSpools(root: string, sessionId: string): Promise<string[]> {
  const { readdir } = await import('node:fs/promises')
  const state = join(root, '.runner-state')
  const entries = await readdir(state, { recursive: true, withFileTypes: true })
  const folders = entries.filter(
    (e) => e.isDirectory() && e.name === 'spools' && e.parentPath.endsWith(`/${sessionId}`),
  )
  expect(folders).toHaveLength(1)
  return entries
    .filter((e) => e.parentPath === join(folders[0]?.parentPath ?? '', 'spools'))
    .map((e) => e.name)
}
