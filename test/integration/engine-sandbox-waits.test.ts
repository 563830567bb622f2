import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import type { MockRequest } from '../support/mock-openai.ts'
import type { RunnerProcess } from '../support/runner-process.ts'
import { attachRunner } from '../support/sandbox-engine.ts'

/**
 * A command that outlives one invocation: the turn commits and answers `waiting`; the runner's
 * signed exit callback continues the same tool loop with the real exit code and output.
 */
const SECRET = 'runner-secret-0123456789'
let engine: Awaited<ReturnType<typeof startEngine>>
let server: RunningServer
let runner: RunnerProcess
let root: string

beforeAll(async () => {
  engine = await startEngine({ defaults: { invocationBudgetMs: 1500 } })
  server = await serveApp(
    createApp({ api: engine.service, auth: { keys: [] }, runnerSecret: SECRET, log: () => {} }),
  )
  root = await mkdtemp(join(tmpdir(), 'turnline-sandbox-'))
  runner = await attachRunner(engine, {
    root,
    secret: SECRET,
    callbackUrl: `${server.url}/v1/runner/callback`,
  })
})
afterAll(async () => {
  await runner?.stop()
  await server?.close()
  await engine?.close()
  await rm(root, { recursive: true, force: true })
})

/** A model that runs a slow command, waits for it, then reports (unified: with unified_exec). */
function scriptedAgent(command: string, unified = false) {
  return (request: MockRequest) => {
    const messages = request.body.messages as { role: string; content: string }[]
    const last = messages.at(-1)
    if (last?.role === 'user') {
      return {
        toolCalls: [
          {
            id: 'c1',
            name: unified ? 'unified_exec' : 'exec_command',
            arguments: JSON.stringify({ cmd: command, yield_time_ms: 250 }),
          },
        ],
      }
    }
    let result: { session_id?: string; is_exited?: boolean; exit_code?: number }
    try {
      result = JSON.parse(last?.content ?? '{}')
    } catch {
      return { text: `the tool failed: ${last?.content}` }
    }
    if (result.is_exited === false) {
      return {
        toolCalls: [
          {
            id: 'c2',
            name: unified ? 'unified_exec' : 'write_stdin',
            arguments: JSON.stringify({
              session_id: result.session_id,
              action: 'wait',
              wait_timeout_seconds: 30,
            }),
          },
        ],
      }
    }
    return { text: `exit ${result.exit_code ?? 'unknown'}` }
  }
}

async function eventsUntil(sessionId: string, done: (events: ThreadEvent[]) => boolean) {
  const deadline = Date.now() + 15_000
  for (;;) {
    const page = await engine.service.readEvents('local', sessionId, -1, 1000)
    const events = page.events.map((e) => e.line.event as ThreadEvent)
    if (done(events)) return events
    if (Date.now() > deadline)
      throw new Error(`timed out; events: ${events.map((e) => e.type).join(',')}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('waits across invocations', () => {
  it('returns waiting, then the exit callback completes the turn with the real exit code', async () => {
    engine.mock.reset()
    engine.mock.respond(scriptedAgent('sleep 3; echo finished; exit 7'))
    const { session_id } = await engine.service.createSession('local', {})
    const first = await engine.service.stepTurn('local', session_id, { input: 'run it' })
    expect(first.status).toBe('waiting')
    expect(first.events.map((e) => e.type)).not.toContain('turn.completed')

    const events = await eventsUntil(session_id, (all) =>
      all.some((e) => e.type === 'turn.completed'),
    )
    const outputs = events.flatMap((e) =>
      e.type === 'item.completed' && e.item.type === 'tool_output' ? [e.item] : [],
    )
    // VT Code's tool_output: the extracted text, and a non-zero exit is `failed` with its code.
    expect(outputs.at(-1)).toMatchObject({ output: 'finished', exit_code: 7, status: 'failed' })
    const final = events
      .filter((e) => e.type === 'item.completed' && e.item.type === 'agent_message')
      .at(-1)
    expect(final).toMatchObject({ item: { text: 'exit 7' } })
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1)
  })

  it('unified_exec (harness.unified_exec) waits across invocations the same way', async () => {
    engine.mock.reset()
    engine.mock.respond(scriptedAgent('sleep 2; echo finished; exit 0', true))
    const { session_id } = await engine.service.createSession('local', {
      harness: { unified_exec: true },
    })
    const first = await engine.service.stepTurn('local', session_id, { input: 'run it' })
    expect(first.status).toBe('waiting')
    const offered = (
      (engine.mock.requests[0]?.body.tools ?? []) as { function: { name: string } }[]
    ).map((tool) => tool.function.name)
    expect(offered.slice(0, 2)).toEqual(['exec_command', 'write_stdin'])
    expect(offered).toContain('unified_exec')

    const events = await eventsUntil(session_id, (all) =>
      all.some((e) => e.type === 'turn.completed'),
    )
    const outputs = events.flatMap((e) =>
      e.type === 'item.completed' && e.item.type === 'tool_output' ? [e.item] : [],
    )
    expect(outputs.at(-1)).toMatchObject({ output: 'finished', exit_code: 0, status: 'completed' })
    expect(events.at(-2)).toMatchObject({ item: { text: 'exit 0' } })

    // Without the setting, sessions are offered exec_command and write_stdin only.
    engine.mock.reset()
    engine.mock.enqueue({ text: 'ok' })
    const plain = await engine.service.createSession('local', {})
    await engine.service.stepTurn('local', plain.session_id, { input: 'hi' })
    const names = (
      (engine.mock.requests[0]?.body.tools ?? []) as { function: { name: string } }[]
    ).map((tool) => tool.function.name)
    expect(names).toContain('write_stdin')
    expect(names).not.toContain('unified_exec')
    engine.mock.assertDone()
  })

  it('a runner killed mid-wait fails the call honestly, without running it again', async () => {
    engine.mock.reset()
    engine.mock.respond(scriptedAgent('sleep 30'))
    const { session_id } = await engine.service.createSession('local', {})
    expect((await engine.service.stepTurn('local', session_id, { input: 'run it' })).status).toBe(
      'waiting',
    )
    await runner.crash()
    const next = await engine.service.stepTurn('local', session_id, {})
    const outputs = next.events.flatMap((e) =>
      e.type === 'item.completed' && e.item.type === 'tool_output' ? [e.item] : [],
    )
    expect(outputs[0]).toMatchObject({
      status: 'failed',
      output: expect.stringContaining('unavailable'),
    })
    expect(next.events.map((e) => e.type)).toContain('turn.completed')
    expect(
      engine.mock.requests.filter((r) => JSON.stringify(r.body).includes('exec_command')).length,
    ).toBeGreaterThan(0)
    runner = await attachRunner(engine, {
      root,
      secret: SECRET,
      callbackUrl: `${server.url}/v1/runner/callback`,
    })
  })

  it('refuses unsigned and replayed callbacks', async () => {
    const unsigned = await fetch(`${server.url}/v1/runner/callback`, { method: 'POST', body: '{}' })
    expect(unsigned.status).toBe(401)
  })
})
