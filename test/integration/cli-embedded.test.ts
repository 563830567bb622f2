import { spawn } from 'node:child_process'
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEventLine, serializeEvent } from '../../src/contract/serialize.ts'
import {
  type CliOptions,
  cliEnv,
  collect,
  jsonLines,
  repoRoot,
  runCli,
  spawnCli,
} from '../support/cli-process.ts'
import {
  cmdlineOf,
  descendantsOf,
  environOf,
  isGone,
  parentOf,
  waitFor,
} from '../support/proc-tree.ts'

/**
 * The real `turnline` binary against its embedded engine (sessions in a temporary
 * TURNLINE_DATA_DIR, the reference runner in the CLI's process) with no model configured: the
 * offline demo model answers, so the whole loop runs without a network.
 */
let dir = ''
let options: CliOptions = {}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-cli-'))
  // The command sandbox's user must get through to the workspaces (mkdtemp makes it 0700).
  await chmod(dir, 0o711)
  options = { cwd: dir, env: { TURNLINE_DATA_DIR: join(dir, 'data') } }
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const cli = (args: string[], extra: CliOptions = {}) =>
  runCli(args, { ...options, ...extra, env: { ...options.env, ...extra.env } })

type Event = Record<string, unknown> & { type: string; item?: Record<string, unknown> }
const events = (stdout: string) => jsonLines(stdout) as Event[]
const sessionOf = (stderr: string) => /session (session-\S+)/.exec(stderr)?.[1] ?? ''

// Every test spawns the binary a few times; each start compiles TypeScript on the fly (tsx).
describe('turnline exec, embedded engine, offline demo model', { timeout: 180_000 }, () => {
  it('runs a prompt through the loop: bare ThreadEvents on stdout, the same in --events, the answer in --last-message-file', async () => {
    const eventsFile = join(dir, 'events.jsonl')
    const lastFile = join(dir, 'last.txt')
    const run = await cli([
      'exec',
      '--json',
      '--events',
      eventsFile,
      '--last-message-file',
      lastFile,
      'run `echo hi-from-cli`',
    ])
    expect(run.stderr).toMatch(/OFFLINE DEMO MODEL/)
    expect(run.code, run.stderr).toBe(0)
    const lines = run.stdout.split('\n').filter(Boolean)
    // Canonical VT Code bytes: every line re-serializes to itself.
    for (const line of lines) expect(serializeEvent(parseEventLine(line))).toBe(line)
    const all = events(run.stdout)
    expect(all[0]?.type).toBe('thread.started')
    const done = all.at(-1)
    expect(done).toMatchObject({ type: 'thread.completed', subtype: 'success', num_turns: 2 })
    expect(all.filter((e) => e.type === 'thread.completed')).toHaveLength(1)
    const call = all.find((e) => e.type === 'item.completed' && e.item?.type === 'tool_invocation')
    expect(call?.item).toMatchObject({
      tool_name: 'exec_command',
      arguments: { cmd: 'echo hi-from-cli' },
    })
    const output = all.find((e) => e.type === 'item.completed' && e.item?.type === 'tool_output')
    expect(String(output?.item?.output)).toContain('hi-from-cli')
    expect(String(done?.result)).toMatch(/^\[offline demo model\] Done\./)
    expect(await readFile(eventsFile, 'utf8')).toBe(run.stdout)
    expect(await readFile(lastFile, 'utf8')).toBe(done?.result)
    // --json keeps stderr free of progress.
    expect(run.stderr).not.toMatch(/exec_command/)

    // The same session, read back: the events feed, bare, and the session list.
    const thread = String(all[0]?.thread_id)
    const replay = await cli(['events', thread, '--json'])
    expect(replay.code, replay.stderr).toBe(0)
    expect(replay.stdout).toBe(run.stdout)
    const listed = await cli(['sessions', '--json'])
    expect(listed.code, listed.stderr).toBe(0)
    const page = JSON.parse(listed.stdout) as { sessions: { session_id: string; status: string }[] }
    expect(page.sessions).toContainEqual(
      expect.objectContaining({ session_id: thread, status: 'completed' }),
    )
  })

  it("keeps the runner's info lines off stderr, as the engine's: only warnings and faults", async () => {
    // A descriptor the command inherits reaches its runner, which closes it and logs that
    // (inherited_descriptors_closed), as it logs its egress probe's refusal (egress_refused).
    const child = spawn(
      process.execPath,
      [join(repoRoot, 'cli/turnline.mjs'), 'exec', '--json', 'run `echo hi`'],
      {
        cwd: dir,
        env: cliEnv(options.env),
        stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
      },
    )
    const run = await collect(child)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).not.toMatch(/"runner":true|inherited_descriptors_closed|egress_refused/)
  })

  it('shows progress on stderr, one line per item, and the answer on stdout; reads the prompt from stdin', async () => {
    const run = await cli(['exec', '-'], { input: 'write notes.txt: hello notes\n' })
    expect(run.code, run.stderr).toBe(0)
    const err = run.stderr
    expect(err).toMatch(
      /turnline exec · session session-\S+ · embedded engine, sessions in .*data, model turnline-demo \(the offline demo model\)/,
    )
    expect(err).toMatch(/^thinking: The prompt asks to write a file/m)
    expect(err).toMatch(/^✓ write_file notes\.txt · done · \d+\.\ds$/m)
    expect(err).toMatch(/^✎ add notes\.txt$/m)
    expect(err).toMatch(/^assistant\n\[offline demo model\] Done\./m)
    expect(err).toMatch(/^✓ success · 2 model calls · \d+ tokens in, \d+ out · /m)
    // stdout is a pipe: it gets the final answer, and nothing else.
    expect(run.stdout).toMatch(
      /^\[offline demo model\] Done\. write_file answered:\nCreated notes\.txt/,
    )
    const human = await cli(['events', sessionOf(err)])
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/^✓ write_file notes\.txt · done$/m)
    expect(human.stdout).toMatch(/^✓ success · 2 model calls/m)
    // From after the call: its output still names the tool and file, never an item id.
    const stored = events((await cli(['events', sessionOf(err), '--json'])).stdout)
    const call = stored.findIndex(
      (e) => e.type === 'item.completed' && e.item?.type === 'tool_invocation',
    )
    const tail = await cli(['events', sessionOf(err), '--after', String(call)])
    expect(tail.code, tail.stderr).toBe(0)
    expect(tail.stdout).toMatch(/^✓ write_file notes\.txt · done$/m)
    expect(tail.stdout).not.toMatch(/item_\d/)
  })

  it('keeps a session open with --keep-open; resume continues it in the same sandbox, then forks it once completed', async () => {
    const first = await cli(['exec', '--keep-open', '--json', 'write kept.txt: kept for later'])
    expect(first.code, first.stderr).toBe(0)
    const opened = events(first.stdout)
    expect(opened.some((e) => e.type === 'thread.completed')).toBe(false)
    const sid = String(opened[0]?.thread_id)

    const second = await cli(['exec', 'resume', sid, '--json', 'read kept.txt'])
    expect(second.code, second.stderr).toBe(0)
    const resumed = events(second.stdout)
    // Only the new turn's events: the session's earlier ones were printed by the first run.
    expect(resumed[0]?.type).toBe('turn.started')
    const read = resumed.find((e) => e.type === 'item.completed' && e.item?.type === 'tool_output')
    expect(String(read?.item?.output)).toContain('kept for later')
    expect(resumed.at(-1)).toMatchObject({
      type: 'thread.completed',
      session_id: sid,
      subtype: 'success',
    })

    const third = await cli(['exec', 'resume', sid, 'hello again'])
    expect(third.code, third.stderr).toBe(0)
    expect(third.stderr).toMatch(
      new RegExp(`session ${sid} is completed; continuing in a fork, session-\\S+`),
    )
    expect(third.stdout).toMatch(/You wrote: "hello again"/)

    const last = await cli(['exec', 'resume', '--last', '--json', 'and once more'])
    expect(last.code, last.stderr).toBe(0)
    expect(events(last.stdout).at(-1)).toMatchObject({
      type: 'thread.completed',
      subtype: 'success',
    })
  })

  it('exits with the outcome: error_max_turns is 3, an answer off --output-schema is 6', async () => {
    const limited = await cli(['exec', '--json', '--max-turns', '1', 'run `echo one`'])
    expect(limited.code, limited.stderr).toBe(3)
    expect(events(limited.stdout).at(-1)).toMatchObject({
      type: 'thread.completed',
      subtype: 'error_max_turns',
      outcome_code: 'turn_limit_reached',
    })

    // resume takes the limits exec takes: a completed session goes on in a fork under them…
    const raised = await cli(['exec', 'resume', '--last', '--max-turns', '4', 'run `echo two`'])
    expect(raised.code, raised.stderr).toBe(0)
    expect(raised.stderr).toMatch(/is completed; continuing in a fork/)
    expect(raised.stderr).toMatch(/^✓ exec_command echo two · exit 0/m)
    // …and an open session gets them on top of what it used (2 model requests here).
    const open = await cli(['exec', '--keep-open', '--json', '--max-turns', '2', 'run `echo a`'])
    expect(open.code, open.stderr).toBe(0)
    const sid = String(events(open.stdout)[0]?.thread_id)
    const more = await cli(['exec', 'resume', sid, '--json', '--max-turns', '2', 'run `echo b`'])
    expect(more.code, more.stderr).toBe(0)
    expect(events(more.stdout).at(-1)).toMatchObject({ subtype: 'success', num_turns: 4 })

    const good = join(dir, 'good.json')
    await writeFile(
      good,
      JSON.stringify({
        type: 'object',
        properties: { verdict: { enum: ['pass', 'fail'] }, notes: { type: 'string' } },
        required: ['verdict', 'notes'],
        additionalProperties: false,
      }),
    )
    const structured = await cli(['exec', '--output-schema', good, 'judge this'])
    expect(structured.code, structured.stderr).toBe(0)
    expect(JSON.parse(structured.stdout)).toEqual({ verdict: 'pass', notes: 'offline demo value' })

    const strict = join(dir, 'strict.json')
    await writeFile(strict, JSON.stringify({ type: 'string', pattern: '^x+$' }))
    const mismatch = await cli(['exec', '--output-schema', strict, 'say x'])
    expect(mismatch.code).toBe(6)
    expect(mismatch.stderr).toMatch(/--output-schema: the final answer does not match/)
  })

  it('continues a turn through sandbox waits, spaced out, showing the wait', async () => {
    const file = join(dir, 'wait-events.jsonl')
    const run = await cli(['exec', '--events', file, 'run `sleep 3 && echo woke-up`'], {
      env: { TURNLINE_INVOCATION_BUDGET_MS: '1000' },
    })
    // Each continuation of the wait commits an update of the waiting call: a handful, not a
    // tight loop (looks 0.5 s apart, doubling).
    const updates = events(await readFile(file, 'utf8')).filter(
      (e) => e.type === 'item.updated' && e.item?.tool_name === 'write_stdin',
    )
    expect(updates.length).toBeGreaterThan(1)
    expect(updates.length).toBeLessThan(8)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/^✓ exec_command sleep 3 && echo woke-up · still running/m)
    expect(run.stderr).toMatch(
      /^… waiting on write_stdin wait run-\S+ \(the turn continues when it exits\)$/m,
    )
    expect(run.stderr).toMatch(/^✓ write_stdin wait run-\S+ · exit 0 · \d+\.\ds\n {2}│ woke-up$/m)
    expect(run.stdout).toMatch(/exited with code 0, output:\nwoke-up/)
  })

  it('cancels the session on Ctrl-C and exits 130', async () => {
    const child = spawnCli(['exec', 'run `sleep 60`'], {
      ...options,
      env: { ...options.env, TURNLINE_INVOCATION_BUDGET_MS: '1000' },
    })
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    for (let i = 0; i < 400 && !/waiting on/.test(stderr); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(stderr).toMatch(/waiting on/)
    child.kill('SIGINT')
    const result = await collect(child)
    expect(result.code, stderr).toBe(130)
    expect(stderr).toMatch(/interrupted: cancelling the session/)
    const replay = await cli(['events', sessionOf(stderr), '--json'])
    expect(events(replay.stdout).at(-1)).toMatchObject({
      type: 'thread.completed',
      subtype: 'cancelled',
    })
  })

  it('runs its runner as a child process that ends with its commands when the CLI is killed', async () => {
    const child = spawnCli(['exec', 'run `echo begun; sleep 600`'], options)
    const cli = child.pid ?? -1
    const sleeping = () => descendantsOf(cli).filter((pid) => /sleep 600/.test(cmdlineOf(pid)))
    await waitFor(
      () => sleeping().length > 0,
      () => `no command below the CLI: ${descendantsOf(cli).map(cmdlineOf).join('; ')}`,
      60_000,
    )
    const below = descendantsOf(cli)
    const runner = below.find(
      (pid) => parentOf(pid) === cli && /runner-child|child-main/.test(cmdlineOf(pid)),
    )
    expect(runner, below.map(cmdlineOf).join('\n')).toBeDefined()
    expect(environOf(runner ?? -1).join('\n')).not.toMatch(/TURNLINE_|HOME=/)
    child.kill('SIGKILL')
    await collect(child)
    const left = () => below.filter((pid) => !isGone(pid))
    await waitFor(
      () => left().length === 0,
      () => `still running: ${left().map((pid) => `${pid} ${cmdlineOf(pid)}`)}`,
    )
  })

  it('lists sessions by last activity, a page at a time, every one reachable with --cursor', async () => {
    const env = { TURNLINE_DATA_DIR: join(dir, 'listing') }
    const made: string[] = []
    for (const n of [1, 2, 3]) {
      const run = await cli(['exec', '--json', `hello ${n}`], { env })
      expect(run.code, run.stderr).toBe(0)
      made.push(String((events(run.stdout)[0] as { thread_id?: string }).thread_id))
    }
    const first = await cli(['sessions', '--limit', '2'], { env })
    expect(first.code, first.stderr).toBe(0)
    const ids = (text: string) => [...text.matchAll(/^(session-\S+)/gm)].map((m) => m[1])
    expect(ids(first.stdout)).toEqual([made[2], made[1]])
    const cursor = /--cursor (\S+)\)/.exec(first.stderr)?.[1]
    expect(cursor, first.stderr).toBeDefined()
    const rest = await cli(['sessions', '--limit', '2', '--cursor', String(cursor)], { env })
    expect(ids(rest.stdout)).toEqual([made[0]])
    expect(rest.stderr).not.toContain('--cursor')
    const oldest = await cli(['sessions', '--oldest', '--limit', '1'], { env })
    expect(ids(oldest.stdout)).toEqual([made[0]])
  })

  it('refuses bad command lines with exit 2 and a message', async () => {
    const cases: [string[], RegExp][] = [
      [['exec'], /no prompt/],
      [['exec', '--max-turns', '0', 'x'], /--max-turns: a whole number/],
      [['exec', '--bogus', 'x'], /Unknown option '--bogus'/],
      [
        ['exec', 'resume', 'session-x', '--model', 'gpt-4o', 'x'],
        /--model only apply to a new session/,
      ],
      [['exec', '--output-schema', join(dir, 'missing.json'), 'x'], /cannot read/],
      [['frobnicate'], /unknown command "frobnicate"/],
    ]
    for (const [args, message] of cases) {
      const run = await cli(args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toMatch(message)
    }
  })
})

/** An unprivileged user's uid, not the sandbox's default (65534): the project folder's owner. */
const PROJECT_UID = 1234

describe("turnline exec on the user's own folder (project mode)", { timeout: 180_000 }, () => {
  let project = ''
  beforeAll(async () => {
    project = join(dir, 'project')
    await mkdir(project)
    await writeFile(join(project, 'existing-file.txt'), 'was here before\n')
    // A user's own folder: the tests run as root, so it is given to a user of its own.
    await chown(project, PROJECT_UID, PROJECT_UID)
    await chown(join(project, 'existing-file.txt'), PROJECT_UID, PROJECT_UID)
  })

  it('works in the current folder: says so at start, lists its files, and writes there as its owner', async () => {
    const run = await cli(
      ['exec', '--json', 'run `ls -la; id -u; echo made > made-by-command.txt`'],
      {
        cwd: project,
      },
    )
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(
      `turnline: the agent works in ${project} and may change files there`,
    )
    const output = events(run.stdout).find(
      (e) => e.type === 'item.completed' && e.item?.type === 'tool_output',
    )
    const text = String(output?.item?.output)
    expect(text).toContain('existing-file.txt')
    expect(text).toContain(String(PROJECT_UID))
    const made = await stat(join(project, 'made-by-command.txt'))
    expect(made.uid).toBe(PROJECT_UID)

    // A file tool writes there too, and what it makes is the folder owner's, not the sandbox user's.
    const write = await cli(['exec', '--json', 'write notes.txt: hello from the agent'], {
      cwd: project,
    })
    expect(write.code, write.stderr).toBe(0)
    expect(await readFile(join(project, 'notes.txt'), 'utf8')).toBe('hello from the agent')
    expect((await stat(join(project, 'notes.txt'))).uid).toBe(PROJECT_UID)
  })

  it('--cd DIR picks the folder; resume works in it too', async () => {
    const run = await cli(['exec', '--cd', project, '--keep-open', 'run `echo first > cd-one.txt`'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(`the agent works in ${project}`)
    const again = await cli(['exec', 'resume', '--last', '-C', project, 'run `cat cd-one.txt`'])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain('first')
  })

  it('refuses a sessions folder inside the project, and --cd with a server', async () => {
    const inside = await cli(['exec', 'run `ls`'], {
      cwd: project,
      env: { TURNLINE_DATA_DIR: join(project, '.turnline'), TURNLINE_RUNNER_ROOT: join(dir, 'rr') },
    })
    expect(inside.code).toBe(2)
    expect(inside.stderr).toMatch(/TURNLINE_DATA_DIR .* overlap/)
    // The runner's root beside it (its default) is refused as well.
    const runnerInside = await cli(['exec', 'run `ls`'], {
      cwd: project,
      env: { TURNLINE_DATA_DIR: join(project, 'data') },
    })
    expect(runnerInside.code).toBe(2)
    expect(runnerInside.stderr).toMatch(/TURNLINE_RUNNER_ROOT .* overlap/)
    const remote = await cli(['exec', '--url', 'http://127.0.0.1:9', '--cd', project, 'x'])
    expect(remote.code).toBe(2)
    expect(remote.stderr).toMatch(/--cd applies to the embedded engine/)
  })

  it('a folder of root: commands never run as root, so a sandbox folder of its own, said at start', async () => {
    const run = await cli(['exec', '--json', 'run `echo in-sandbox > root-case.txt`'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/belongs to root .* sandbox folder of its own/)
    await expect(stat(join(dir, 'root-case.txt'))).rejects.toThrow()
  })
})

describe('turnline from a clone', { timeout: 180_000 }, () => {
  it('runs with npx from the repository root', async () => {
    const child = spawn('npx', ['turnline', '--version'], {
      cwd: repoRoot,
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const result = await collect(child)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^turnline \d+\.\d+\.\d+\n$/)
  })

  it('runs compiled (npm run build), as cli/turnline.mjs does without tsx', async () => {
    // Inside the clone, so that the bundle's package imports resolve from its node_modules.
    const out = await mkdtemp(join(repoRoot, '.tmp', 'cli-build-'))
    try {
      const build = await collect(
        spawn(process.execPath, ['infra/build/build.mjs', 'cli', '--out', out], {
          cwd: repoRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      )
      expect(build.code, build.stderr).toBe(0)
      const compiled = join(out, 'cli/main.mjs')
      const run = await collect(
        spawn(process.execPath, [compiled, 'exec', '--json', 'run `echo compiled-cli`'], {
          cwd: dir,
          env: cliEnv({ TURNLINE_DATA_DIR: join(dir, 'compiled') }),
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      )
      expect(run.code, run.stderr).toBe(0)
      const all = events(run.stdout)
      const output = all.find((e) => e.type === 'item.completed' && e.item?.type === 'tool_output')
      expect(String(output?.item?.output)).toContain('compiled-cli')
      const version = await collect(
        spawn(process.execPath, [compiled, '--version'], { stdio: ['ignore', 'pipe', 'pipe'] }),
      )
      expect(version.stdout).toMatch(/^turnline \d+\.\d+\.\d+\n$/)
    } finally {
      await rm(out, { recursive: true, force: true })
    }
  })
})
