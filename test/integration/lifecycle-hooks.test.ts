import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { type HookConfigInput, HooksSchema } from '../../src/contract/hook-config.ts'
import {
  preCompactPayload,
  preToolUsePayload,
  stopPayload,
} from '../../src/core/hooks/hook-payloads.ts'
import { type HookRunnerDeps, hookWarnings, runHooks } from '../../src/core/hooks/run-hooks.ts'
import { gate } from '../support/gate.ts'
import { closedPort, startHookReceiver } from '../support/hook-receiver.ts'
import { isAlive, shellHookRunner } from '../support/shell-hook-runner.ts'

const SECRET = 'hook-secret-for-tests'
const ctx = {
  sessionId: 'sess-42',
  cwd: '/workspace/demo',
  transcriptPath: 'sessions/sess-42/events.jsonl',
}
const toolCall = preToolUsePayload(ctx, {
  toolName: 'send_email',
  toolInput: { to: 'ops@example.com' },
  toolCallId: 'call_7',
})

let receiver: Awaited<ReturnType<typeof startHookReceiver>>
let deps: HookRunnerDeps
let workdir: string
let shell: ReturnType<typeof shellHookRunner>

beforeAll(async () => {
  receiver = await startHookReceiver(SECRET)
  workdir = await mkdtemp(path.join(tmpdir(), 'turnline-hooks-'))
  shell = shellHookRunner(workdir)
})
afterAll(async () => {
  await receiver.close()
  await rm(workdir, { recursive: true, force: true })
})
beforeEach(() => {
  receiver.received.length = 0
  receiver.setReply(() => ({ body: '{}' }))
  deps = {
    tenant: 't1',
    http: { fetch, allowedHosts: [receiver.host], secretFor: () => SECRET },
    runCommand: shell.run,
  }
})

const hooks = (...list: HookConfigInput[]) => HooksSchema.parse(list)

describe('HTTP hooks against a real receiver', () => {
  it('delivers the payload signed; the receiver verifies the signature', async () => {
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'http', url: receiver.url('/audit') }),
      deps,
    )
    expect(outcome.denied).toBeUndefined()
    expect(outcome.results).toMatchObject([
      { index: 0, name: 'pre_tool_use#0', ok: true, status: 200 },
    ])
    expect(receiver.received).toHaveLength(1)
    const [delivery] = receiver.received
    expect(delivery?.signatureValid).toBe(true)
    expect(delivery?.raw).toBe(JSON.stringify(toolCall))
    expect(delivery?.headers['turnline-hook-event']).toBe('pre_tool_use')
    expect(delivery?.headers['turnline-session']).toBe('sess-42')
  })

  it('records a delivery the receiver refuses (wrong secret) without denying', async () => {
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'http', url: receiver.url('/x'), blocking: true }),
      { ...deps, http: { ...deps.http, secretFor: () => 'not-the-secret' } },
    )
    expect(receiver.received[0]?.signatureValid).toBe(false)
    expect(outcome.denied).toBeUndefined()
    expect(outcome.results[0]).toMatchObject({ ok: false, status: 401 })
    expect(outcome.results[0]?.error).toMatch(/^HTTP 401/)
  })

  it('honours a blocking hook’s deny', async () => {
    receiver.setReply(() => ({
      body: JSON.stringify({ decision: 'deny', reason: 'no mail on Sundays' }),
    }))
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks(
        { event: 'pre_tool_use', type: 'http', url: receiver.url('/a') },
        {
          event: 'pre_tool_use',
          type: 'http',
          url: receiver.url('/b'),
          blocking: true,
          name: 'policy',
        },
      ),
      deps,
    )
    expect(outcome.denied).toEqual({ reason: 'no mail on Sundays', hook: 'policy' })
    expect(outcome.results.map((r) => [r.name, r.decision, r.honoured])).toEqual([
      ['pre_tool_use#0', 'deny', false],
      ['policy', 'deny', true],
    ])
  })

  it('records a non-blocking hook’s deny and ignores it', async () => {
    receiver.setReply(() => ({ body: '{"decision":"deny","reason":"nope"}' }))
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'http', url: receiver.url('/a') }),
      deps,
    )
    expect(outcome.denied).toBeUndefined()
    expect(outcome.results[0]).toMatchObject({
      ok: true,
      decision: 'deny',
      reason: 'nope',
      honoured: false,
    })
    expect(hookWarnings('pre_tool_use', outcome)).toEqual([
      'pre_tool_use hook pre_tool_use#0 answered deny, ignored: the hook is not blocking',
    ])
  })

  it('does not let any hook deny an event that cannot be denied', async () => {
    receiver.setReply(() => ({ body: '{"decision":"deny"}' }))
    const payload = preCompactPayload(ctx, {
      trigger: 'manual',
      mode: 'local',
      originalMessageCount: 30,
      compactedMessageCount: 6,
    })
    const outcome = await runHooks(
      'pre_compact',
      payload,
      hooks({ event: 'pre_compact', type: 'http', url: receiver.url('/c'), blocking: true }),
      deps,
    )
    expect(outcome.denied).toBeUndefined()
    expect(outcome.results[0]?.decision).toBe('deny')
    expect(receiver.received[0]?.body).toMatchObject({
      hook_event_name: 'PreCompact',
      trigger: 'manual',
    })
  })

  it('records a timeout, does not wait past it, and fails closed only when asked', async () => {
    // The receiver answers only after the test: the hook's own timeout must end the wait.
    const late = gate()
    onTestFinished(late.open)
    receiver.setReply(() => ({ body: '{}', hold: late.promise }))
    const config = {
      event: 'pre_tool_use',
      type: 'http',
      url: receiver.url('/slow'),
      timeout_ms: 200,
    } as const
    const started = Date.now()
    const open = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ ...config, blocking: true }),
      deps,
    )
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(open.denied).toBeUndefined()
    expect(open.results[0]).toMatchObject({
      ok: false,
      timedOut: true,
      error: 'timed out after 200 ms',
    })
    expect(open.results[0]?.durationMs).toBeGreaterThanOrEqual(150)
    const closed = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ ...config, blocking: true, fail_closed: true, name: 'gate' }),
      deps,
    )
    expect(closed.denied).toEqual({
      hook: 'gate',
      reason: 'hook gate failed (timed out after 200 ms) and is fail-closed',
    })
  })

  it('records an unreachable receiver', async () => {
    const port = await closedPort()
    const outcome = await runHooks(
      'stop',
      stopPayload(ctx, { lastAssistantMessage: 'done' }),
      hooks({ event: 'stop', type: 'http', url: `http://127.0.0.1:${port}/gone`, blocking: true }),
      { ...deps, http: { ...deps.http, allowedHosts: [`127.0.0.1:${port}`] } },
    )
    expect(outcome.denied).toBeUndefined()
    expect(outcome.results[0]?.ok).toBe(false)
    expect(outcome.results[0]?.error).toMatch(/^could not be reached/)
    expect(hookWarnings('stop', outcome)[0]).toMatch(
      /^stop hook stop#0 failed: could not be reached/,
    )
  })

  it('never calls a host off the allow-list, and does not follow redirects', async () => {
    receiver.setReply(() => ({ status: 302, headers: { location: receiver.url('/elsewhere') } }))
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks(
        { event: 'pre_tool_use', type: 'http', url: 'http://127.0.0.2:1/x' },
        { event: 'pre_tool_use', type: 'http', url: receiver.url('/moved') },
      ),
      deps,
    )
    expect(outcome.results[0]).toMatchObject({
      ok: false,
      error: 'host 127.0.0.2:1 is not allowed',
    })
    expect(outcome.results[1]).toMatchObject({ ok: false, status: 302 })
    expect(receiver.received.map((r) => r.path)).toEqual(['/moved'])
  })

  it('runs only the hooks whose event and matcher fit, concurrently', async () => {
    // Each hook is answered only once both have arrived: run one after the other, the first
    // would wait for the second until its timeout and fail.
    const both = gate()
    onTestFinished(both.open)
    receiver.setReply(() => {
      if (receiver.received.length === 2) both.open()
      return { body: '{}', hold: both.promise }
    })
    const list = hooks(
      { event: 'pre_tool_use', type: 'http', url: receiver.url('/send'), matcher: 'send_.*' },
      { event: 'pre_tool_use', type: 'http', url: receiver.url('/other'), matcher: 'lookup' },
      { event: 'post_tool_use', type: 'http', url: receiver.url('/post') },
      { event: 'pre_tool_use', type: 'http', url: receiver.url('/all') },
    )
    const outcome = await runHooks('pre_tool_use', toolCall, list, deps)
    expect(outcome.results.map((r) => r.index)).toEqual([0, 3])
    expect(outcome.results.map((r) => r.ok)).toEqual([true, true])
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/all', '/send'])
  })
})

describe('command hooks through a real child process', () => {
  it('runs sh -c with the payload on stdin and VT Code’s environment', async () => {
    const out = path.join(workdir, 'seen')
    const command =
      `cat > '${out}.json'; ` +
      `printf '%s|%s|%s|%s|%s|%s' "$VT_PROJECT_DIR" "$CLAUDE_PROJECT_DIR" "$VT_SESSION_ID" ` +
      `"$VT_HOOK_EVENT" "$VT_TRANSCRIPT_PATH" "$CLAUDE_TRANSCRIPT_PATH" > '${out}.env'`
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'command', command }),
      deps,
    )
    expect(outcome.results[0]).toMatchObject({ ok: true, exitCode: 0 })
    expect(await readFile(`${out}.json`, 'utf8')).toBe(JSON.stringify(toolCall))
    expect(await readFile(`${out}.env`, 'utf8')).toBe(
      '/workspace/demo|/workspace/demo|sess-42|PreToolUse|sessions/sess-42/events.jsonl|sessions/sess-42/events.jsonl',
    )
  })

  it('denies with exit code 2 when blocking (stderr is the reason), ignores it otherwise', async () => {
    const command = "echo 'rm -rf is not allowed' >&2; exit 2"
    const blocking = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'command', command, blocking: true }),
      deps,
    )
    expect(blocking.denied).toEqual({ reason: 'rm -rf is not allowed', hook: 'pre_tool_use#0' })
    expect(blocking.results[0]).toMatchObject({ ok: true, exitCode: 2, honoured: true })
    const advisory = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'command', command }),
      deps,
    )
    expect(advisory.denied).toBeUndefined()
    expect(advisory.results[0]).toMatchObject({ decision: 'deny', honoured: false })
  })

  it('reads a JSON deny on stdout', async () => {
    const command = `printf '%s' '{"decision":"deny","reason":"json says no"}'`
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'command', command, blocking: true }),
      deps,
    )
    expect(outcome.denied?.reason).toBe('json says no')
  })

  it('records other exit codes as failures', async () => {
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({
        event: 'pre_tool_use',
        type: 'command',
        command: 'echo broken >&2; exit 3',
        blocking: true,
      }),
      deps,
    )
    expect(outcome.denied).toBeUndefined()
    expect(outcome.results[0]).toMatchObject({
      ok: false,
      exitCode: 3,
      error: 'exited with code 3: broken',
    })
  })

  it('stops waiting at the timeout and has the runner kill the command', async () => {
    const before = shell.pids.length
    const started = Date.now()
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'command', command: 'sleep 5', timeout_ms: 300 }),
      deps,
    )
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(outcome.results[0]).toMatchObject({ ok: false, timedOut: true })
    const pid = shell.pids[before]
    expect(pid).toBeDefined()
    await expect.poll(() => isAlive(pid ?? -1), { timeout: 2_000 }).toBe(false)
  })

  it('records command hooks as failed when no runner is configured', async () => {
    const { runCommand: _unused, ...withoutRunner } = deps
    const outcome = await runHooks(
      'pre_tool_use',
      toolCall,
      hooks({ event: 'pre_tool_use', type: 'command', command: 'true', blocking: true }),
      withoutRunner,
    )
    expect(outcome).toEqual({
      results: [expect.objectContaining({ ok: false, error: 'no command runner is configured' })],
    })
  })
})
