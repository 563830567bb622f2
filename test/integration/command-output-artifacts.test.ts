import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { contentArtifactId } from '../support/content-artifact-id.ts'
import { useEngineWithRunner } from '../support/engine-with-runner.ts'

/**
 * A command whose output passes the inline limit (64 KiB) through the engine and the reference
 * runner: the whole output is copied from the spool into an output artifact of the session, the
 * model's answer names it (`output_artifact_id`), the artifact reads back byte-identical even
 * after the command's spool was deleted, and the model pages through it with read_tool_output.
 */
const fixture = useEngineWithRunner('command-outputs')

/** 120,000 numbered lines (about 2.5 MB); line 99,999 carries a marker. */
const COMMAND =
  'awk \'BEGIN { for (i = 1; i <= 120000; i++) printf "row %06d %s\\n", i, (i == 99999 ? "NEEDLE-c0de" : "ok") }\''

function expected(): string {
  const lines: string[] = []
  for (let i = 1; i <= 120_000; i++) {
    lines.push(`row ${String(i).padStart(6, '0')} ${i === 99_999 ? 'NEEDLE-c0de' : 'ok'}\n`)
  }
  return lines.join('')
}

const sha = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex')

/** The content of the last tool message the model was sent. */
function lastToolMessage(): string {
  const messages = (fixture.engine.mock.requests.at(-1)?.body.messages ?? []) as {
    role: string
    content: string
  }[]
  return messages.filter((m) => m.role === 'tool').at(-1)?.content ?? ''
}

function toolAnswers(events: readonly ThreadEvent[]) {
  return events.flatMap((e) =>
    e.type === 'item.completed' && e.item.type === 'tool_invocation' ? [e.item] : [],
  )
}

/** A new session whose model runs `cmd` once and then answers; the turn's result. */
async function commandTurn(cmd: string) {
  const { service, mock } = fixture.engine
  const { session_id } = await service.createSession('local', {})
  mock.enqueue(
    {
      toolCalls: [
        {
          id: 'c1',
          name: 'exec_command',
          arguments: JSON.stringify({ cmd, yield_time_ms: 20_000 }),
        },
      ],
    },
    { text: 'ran it' },
  )
  const turn = await service.stepTurn('local', session_id, { input: 'run it' })
  expect(turn.status, JSON.stringify(turn.warnings)).toBe('completed')
  return { session_id, answer: JSON.parse(lastToolMessage() || '{}') }
}

describe('command output over the inline limit', () => {
  it('is kept whole as an artifact that outlives the spool; the model reads it by reference', async () => {
    const { service, mock } = fixture.engine
    const { session_id, answer: read } = await commandTurn(COMMAND)
    const answer = read as {
      output_artifact_id?: string
      total_output_bytes?: number
      spool_path?: string
    }
    const whole = expected()
    expect(answer.total_output_bytes).toBe(whole.length)
    expect(answer.output_artifact_id).toMatch(/^out_[0-9a-f]{32}$/)
    expect(JSON.stringify(mock.requests.at(-1)?.body).length).toBeLessThan(100_000)
    const id = answer.output_artifact_id ?? ''

    // The command's spool is in the workspace: the next command deletes it. The artifact stays.
    mock.enqueue(
      {
        toolCalls: [
          {
            id: 'c2',
            name: 'exec_command',
            arguments: JSON.stringify({ cmd: `rm -f '${answer.spool_path}'` }),
          },
          {
            id: 'c3',
            name: 'read_tool_output',
            arguments: JSON.stringify({ artifact_id: id, search: 'NEEDLE' }),
          },
        ],
      },
      { text: 'found' },
    )
    const second = await service.stepTurn('local', session_id, { input: 'find the needle' })
    expect(second.status, JSON.stringify(second.warnings)).toBe('completed')
    const [removed, found] = toolAnswers(second.events)
    expect(removed).toMatchObject({ tool_name: 'exec_command', status: 'completed' })
    expect(found).toMatchObject({ tool_name: 'read_tool_output', status: 'completed' })
    const search = lastToolMessage()
    expect(search).toContain('line 99999 (byte ')
    expect(search).toContain('row 099999 NEEDLE-c0de')

    const kept = await service.getOutputArtifact('local', session_id, id)
    const parts: Uint8Array[] = []
    for await (const part of kept.read(0, kept.artifact.size)) parts.push(part)
    const bytes = Buffer.concat(parts)
    expect(kept.artifact.size).toBe(whole.length)
    expect(kept.artifact.lines).toBe(120_000)
    expect(sha(bytes)).toBe(sha(whole))

    // The command's tool_output event names only its spool; the listing names its artifact,
    // by the call that kept it (the search's page quoting the output keeps nothing).
    const listed = await service.listKeptOutputs('local', session_id, { limit: 50 })
    const { events } = await service.readEvents('local', session_id, -1, 1000)
    const first = events
      .map((e) => e.line.event as ThreadEvent)
      .flatMap((e) =>
        e.type === 'item.completed' && e.item.type === 'tool_output' ? [e.item] : [],
      )
      .find((item) => item.tool_call_id === 'c1')
    expect(first).toMatchObject({ output: '', spool_path: answer.spool_path })
    expect(first).not.toHaveProperty('output_artifact_id')
    expect(listed).toEqual({
      resume: expect.stringMatching(/^[0-9]+$/),
      outputs: [
        {
          kind: 'tool_output',
          seq: expect.any(Number),
          item_id: first?.id,
          call_id: first?.call_id,
          tool_call_id: 'c1',
          tool_name: 'exec_command',
          turn_id: expect.stringMatching(/^turn-/),
          artifact_id: id,
          size: whole.length,
          lines: 120_000,
        },
      ],
    })
  })

  it('output within the limit stays inline: no artifact is named', async () => {
    const { session_id, answer } = await commandTurn("head -c 30000 /dev/zero | tr '\\0' q")
    expect(answer.total_output_bytes).toBe(30_000)
    expect(answer).not.toHaveProperty('output_artifact_id')
    const { service } = fixture.engine
    const listed = await service.listKeptOutputs('local', session_id, { limit: 50 })
    expect(listed.outputs).toEqual([])
  })

  it('output over the cap on one output is not kept, and the answer says which setting refused it', async () => {
    const { deps } = fixture.engine
    const before = deps.tools.maxOutputBytes
    deps.tools.maxOutputBytes = 1024 * 1024
    const { answer } = await commandTurn(COMMAND).finally(() => {
      deps.tools.maxOutputBytes = before
    })
    expect(answer).not.toHaveProperty('output_artifact_id')
    expect(answer.output_artifact_error).toContain('TURNLINE_TOOL_MAX_OUTPUT_BYTES')
    expect(answer.spool_path).toMatch(/^\.vtcode\/context\/tool_outputs\//)
  })
})

describe('command hook output over the inline limit', () => {
  it('a 200 KB deny on stdout still denies, and the whole output is kept', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('local', {
      hooks: [
        {
          event: 'pre_tool_use',
          type: 'command',
          command:
            'awk \'BEGIN { printf "{\\"decision\\":\\"deny\\",\\"reason\\":\\"too long "; for (i = 0; i < 200000; i++) printf "z"; printf "\\"}" }\'',
          blocking: true,
          matcher: 'write_file',
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
    const turn = await service.stepTurn('local', session_id, { input: 'write' })
    expect(turn.status, JSON.stringify(turn.warnings)).toBe('completed')
    expect(toolAnswers(turn.events)[0]).toMatchObject({ outcome: 'hook_denied' })
    const told = lastToolMessage()
    expect(told).toContain('too long zzz')
    const id = /kept as artifact (out_[0-9a-f]{32})/.exec(told)?.[1] ?? ''
    const kept = await service.getOutputArtifact('local', session_id, id)
    expect(kept.artifact.size).toBe('{"decision":"deny","reason":"too long "}'.length + 200_000)
    const listed = await service.listKeptOutputs('local', session_id, { limit: 50 })
    // Listed once, as the command hook's answer (its deny reason names it too).
    expect(listed.outputs).toEqual([
      {
        kind: 'hook_answer',
        seq: expect.any(Number),
        turn_id: expect.stringMatching(/^turn-/),
        event: 'pre_tool_use',
        hook: 'pre_tool_use#0',
        hook_index: 0,
        hook_type: 'command',
        tool_call_id: 'w1',
        artifact_id: id,
        size: kept.artifact.size,
        lines: 1,
      },
    ])
  })

  it("a hook's long answer is the operators': the model's read of its exact id is refused", async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('local', {
      hooks: [
        {
          event: 'stop',
          type: 'command',
          command:
            'awk \'BEGIN { printf "stop-secret "; for (i = 0; i < 100000; i++) printf "h" }\'',
        },
      ],
    })
    mock.enqueue({ text: 'hello' })
    const first = await service.stepTurn('local', session_id, { input: 'hi' })
    expect(first.status, JSON.stringify(first.warnings)).toBe('completed')
    const answer = `stop-secret ${'h'.repeat(100_000)}`
    const id = contentArtifactId(answer)
    const listed = await service.listKeptOutputs('local', session_id, { limit: 50 })
    expect(listed.outputs).toMatchObject([{ kind: 'hook_answer', event: 'stop', artifact_id: id }])
    const kept = await service.getOutputArtifact('local', session_id, id)
    expect(kept.artifact.size).toBe(answer.length)

    mock.enqueue(
      {
        toolCalls: [
          { id: 'r1', name: 'read_tool_output', arguments: JSON.stringify({ artifact_id: id }) },
        ],
      },
      { text: 'nothing there' },
    )
    const second = await service.stepTurn('local', session_id, { input: 'read it' })
    expect(second.status, JSON.stringify(second.warnings)).toBe('completed')
    expect(lastToolMessage()).toBe(`no output artifact ${id} in this session`)
  })
})
