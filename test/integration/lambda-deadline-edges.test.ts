import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createOpenResponses } from '@ai-sdk/open-responses'
import { generateText } from 'ai'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { echoTool } from '../support/engine-deps.ts'
import { lambdaDeadline } from '../support/lambda-deadline.ts'
import { type RunnerProcess, startRunnerProcess } from '../support/runner-process.ts'

/**
 * The edges of the pauses before Lambda's timeout (lambda-run-deadlines.test.ts has the runs):
 * work that is not a model request or a tool call but may take as long — a hook, an MCP
 * server's connect — is stopped as the timeout nears, as a failure of its own kind; a webhook
 * resend, or a keyed exec's retry, after the tenant finished its paused turn by hand answers that
 * end; a paused response is read by the `openai` client and the AI SDK without failing.
 */
const RUNNER_SECRET = 'lambda-deadline-runner-secret-0123456789'
/** The sandbox runner that runs command hooks (the reference runner, a real process). */
let runner: RunnerProcess | undefined
let runnerRoot = ''
const lambda = lambdaDeadline('lambda-deadline-edges', async () => {
  runnerRoot = await mkdtemp(join(tmpdir(), 'turnline-lambda-deadline-runner-'))
  // The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700).
  await chmod(runnerRoot, 0o711)
  runner = await startRunnerProcess({ root: runnerRoot, secret: RUNNER_SECRET })
  return { TURNLINE_RUNNER_URL: runner.url, TURNLINE_RUNNER_SECRET: RUNNER_SECRET }
})
const { clock, mock, call, delivery, model, slowRound, storedEvents } = lambda

/**
 * From now on the function's time left runs `pace` times faster than the wall clock, from
 * `from` ms (set `clock.left` to stop it): work that takes a few seconds here meets the margin
 * it would meet after tens of seconds.
 */
function runFast(from: number, pace: number) {
  const start = Date.now()
  Object.defineProperty(clock, 'left', {
    configurable: true,
    get: () => from - (Date.now() - start) * pace,
    set: (left: number) => {
      Object.defineProperty(clock, 'left', { configurable: true, writable: true, value: left })
    },
  })
}

/** A server that never answers: each request arrives with 9 s left (under the 10 s margin). */
let hung: Server
let hungUrl = ''
const arrived: string[] = []
/** The receiver of the `lookup` HTTP tool: counts its calls. */
let receiver: Server
let toolUrl = ''
let toolCalls = 0
beforeAll(async () => {
  hung = createServer((request) => {
    arrived.push(request.url ?? '')
    clock.left = 9_000
    request.resume()
  })
  receiver = createServer((request, response) => {
    toolCalls += 1
    request.resume()
    request.on('end', () => response.writeHead(200).end('found'))
  })
  for (const server of [hung, receiver]) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  }
  hungUrl = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`
  toolUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/lookup`
})
afterAll(async () => {
  await runner?.stop()
  if (runnerRoot) await rm(runnerRoot, { recursive: true, force: true })
  for (const server of [hung, receiver]) {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})

async function session(config: object): Promise<string> {
  const created = await call('POST', '/v1/sessions', config)
  expect(created.status).toBe(201)
  return (JSON.parse(created.text) as { session_id: string }).session_id
}

/**
 * A session with the `lookup` tool whose calls a blocking, fail-closed `pre_tool_use` hook guards
 * (`hook`: its name and kind), with a 120 s timeout; no call of `lookup` counted yet.
 */
async function guardedCall(hook: Record<string, string>): Promise<string> {
  const guard = { event: 'pre_tool_use', blocking: true, fail_closed: true, timeout_ms: 120_000 }
  const tools = [echoTool(toolUrl)]
  const id = await session({ tools, permissions: { mode: 'auto' }, hooks: [{ ...guard, ...hook }] })
  toolCalls = 0
  return id
}

describe('Lambda: what else runs in a turn stops before the function timeout', () => {
  it('a blocking fail_closed hook still running is stopped: the call is denied, saying why', async () => {
    const id = await guardedCall({ type: 'http', name: 'guard', url: `${hungUrl}/guard` })
    model({ step: { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] } })
    const first = await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })
    const answer = JSON.parse(first.text) as { status: string; warnings: string[] }
    // The hook ran until the 10 s margin (it would have run 120 s), then the turn paused.
    expect(answer.warnings.join('\n')).toContain('pre_tool_use hook guard failed: stopped after')
    expect(answer.warnings.join('\n')).toContain("before the platform's timeout ends the request")
    expect(answer.status).toBe('waiting')
    expect(toolCalls).toBe(0)
    const events = JSON.stringify(await storedEvents(id))
    expect(events).toContain('blocked by a pre_tool_use hook: hook guard failed (stopped after')
    expect(events).toContain('and is fail-closed')
    expect(mock().requests).toHaveLength(1)
  }, 60_000)

  it('a blocking fail_closed command hook still running is stopped and denies the call', async () => {
    const id = await guardedCall({ type: 'command', name: 'scan', command: 'sleep 100' })
    model({
      step: { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] },
      // 70 s are left as the round starts, 20 times faster: the hook meets the margin after 3 s.
      onAsked: () => runFast(70_000, 20),
    })
    const first = await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })
    clock.left = 300_000
    const answer = JSON.parse(first.text) as { status: string; warnings: string[] }
    const warned = answer.warnings.join('\n')
    const stopped =
      /pre_tool_use hook scan failed: stopped after (\d+) ms, before the platform's timeout ends the request/
    expect(warned).toMatch(stopped)
    // It ran (the sleep), for the 3 s or so the played time allowed, not its 120 s.
    expect(Number(stopped.exec(warned)?.[1])).toBeGreaterThan(1_000)
    expect(answer.status).toBe('waiting')
    expect(toolCalls).toBe(0)
    const events = JSON.stringify(await storedEvents(id))
    expect(events).toContain('blocked by a pre_tool_use hook: hook scan failed (stopped after')
    expect(events).toContain('and is fail-closed')
  }, 60_000)

  it("an exec run's session_start hook still running is stopped; the run, out of time, is refused", async () => {
    const hook = { event: 'session_start', type: 'http', url: `${hungUrl}/start` }
    const ran = await call('POST', '/v1/exec', {
      prompt: 'go',
      hooks: [{ ...hook, name: 'audit', timeout_ms: 120_000 }],
    })
    // The hook would have held the request 120 s; stopped at the margin, 9 s are left: the
    // stream (its thread.started sent) ends with the turn's refusal as its error line.
    const last = JSON.parse(ran.text.trim().split('\n').at(-1) ?? '{}')
    expect(last).toMatchObject({ type: 'error', message: expect.stringContaining('9 s left') })
    expect(last.message).toContain('Prefer: respond-async')
    expect(mock().requests).toHaveLength(0)
  }, 60_000)

  it("an MCP server's connect still under way is stopped: the turn says so and pauses", async () => {
    const before = arrived.length
    const id = await session({
      mcp_servers: [{ name: 'docs', url: `${hungUrl}/mcp`, timeout_ms: 120_000 }],
    })
    const first = await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })
    const answer = JSON.parse(first.text) as { status: string; warnings: string[] }
    expect(arrived.length).toBeGreaterThan(before)
    // The connect would have waited 120 s for initialize; the turn answers well before.
    expect(answer.warnings.join('\n')).toMatch(
      /MCP server docs: stopped after \d+ ms, before the platform's timeout ends the request; its tools are not offered until it answers/,
    )
    expect(answer.status).toBe('waiting')
    expect(mock().requests).toHaveLength(0)
  }, 60_000)
})

describe('Lambda: a paused run finished by hand', () => {
  /** The two ways a paused turn is finished by hand: continued to its end, or cancelled. */
  const FINISHED_BY_HAND: [string, (id: string) => ReturnType<typeof call>][] = [
    ['continued to its end', (id) => call('POST', `/v1/sessions/${id}/turns`, {})],
    ['cancelled', (id) => call('POST', `/v1/sessions/${id}/cancel`, {})],
  ]
  it.each(FINISHED_BY_HAND)(
    'a webhook resend after its paused turn was %s answers that end, running nothing',
    async (_, finish) => {
      slowRound()
      const send = delivery('{"event":"tag"}')
      const first = await send()
      expect(first.status).toBe(409)
      const id = (JSON.parse(first.text) as { error: { details: { session_id: string } } }).error
        .details.session_id

      clock.left = 300_000
      const finished = await finish(id)
      expect(finished.status).toBe(200)
      expect(JSON.parse(finished.text).status).toBe('terminal')
      const asked = mock().requests.length
      const count = (await storedEvents(id)).length

      const again = await send()
      expect(again.status).toBe(200)
      const answer = JSON.parse(again.text) as {
        session_id: string
        duplicate: boolean
        turn: { status: string; events: { type: string }[] }
      }
      expect(answer).toMatchObject({ session_id: id, duplicate: true })
      expect(answer.turn.status).toBe('terminal')
      expect(answer.turn.events.map((e) => e.type)).toContain('thread.completed')
      // And once more, the same; nothing ran for either.
      const more = await send()
      expect(JSON.parse(more.text)).toEqual(answer)
      expect(mock().requests).toHaveLength(asked)
      expect(await storedEvents(id)).toHaveLength(count)
    },
    60_000,
  )
  it.each(FINISHED_BY_HAND)(
    'a keyed exec retried after its paused turn was %s answers that end, running nothing',
    async (how, finish) => {
      slowRound()
      const key = { 'idempotency-key': `exec-finished-${how.split(' ')[0]}` }
      const lines = (text: string) =>
        text
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { type: string; thread_id?: string; message?: string })
      const first = await call('POST', '/v1/exec', { prompt: 'go' }, key)
      expect(first.status).toBe(200)
      const id = lines(first.text)[0]?.thread_id ?? ''
      expect(lines(first.text).at(-1)?.type).toBe('error')

      clock.left = 300_000
      const finished = await finish(id)
      expect(finished.status).toBe(200)
      expect(JSON.parse(finished.text).status).toBe('terminal')
      const asked = mock().requests.length
      const count = (await storedEvents(id)).length

      const again = await call('POST', '/v1/exec', { prompt: 'go' }, key)
      expect(again.status).toBe(200)
      const answer = lines(again.text)
      expect(answer[0]).toEqual({ type: 'thread.started', thread_id: id })
      expect(answer.map((l) => l.type)).not.toContain('error')
      expect(answer.at(-1)?.type).toBe('thread.completed')
      expect(answer.filter((l) => l.type === 'turn.started')).toHaveLength(1)
      // And once more, the same; nothing ran for either.
      const more = await call('POST', '/v1/exec', { prompt: 'go' }, key)
      expect(more.text).toBe(again.text)
      expect(mock().requests).toHaveLength(asked)
      expect(await storedEvents(id)).toHaveLength(count)
    },
    60_000,
  )
})

describe('Lambda: a paused response and the clients with a closed reason enum', () => {
  it('the openai client reads it incomplete, reason paused, streamed or not', async () => {
    const client = new OpenAI({
      apiKey: lambda.key,
      baseURL: 'https://lambda.test/v1',
      fetch: lambda.fetch,
      maxRetries: 0,
    })
    slowRound()
    const response = await client.responses.create({ model: 'gpt-4o-mini', input: 'go' })
    expect(response.status).toBe('incomplete')
    expect(response.incomplete_details?.reason).toBe('paused')

    clock.left = 300_000
    slowRound()
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'go' })
    const events = []
    for await (const event of stream) events.push(event)
    // The client's own snapshot follows only response.completed (as for OpenAI's incomplete
    // answers): the end is read from the response.incomplete event, as the client types it.
    const end = events.at(-1)
    expect(end?.type).toBe('response.incomplete')
    const final = end?.type === 'response.incomplete' ? end.response : undefined
    expect(final?.status).toBe('incomplete')
    expect(final?.incomplete_details?.reason).toBe('paused')
  }, 60_000)

  it("the AI SDK reads it as finish reason 'other' (raw 'paused'), never as a plain stop", async () => {
    const provider = createOpenResponses({
      name: 'turnline',
      url: 'https://lambda.test/v1/responses',
      apiKey: lambda.key,
      fetch: lambda.fetch,
    })
    slowRound()
    const result = await generateText({ model: provider('gpt-4o-mini'), prompt: 'go' })
    expect(result.finishReason).toBe('other')
    expect(result.rawFinishReason).toBe('paused')
  }, 60_000)
})
