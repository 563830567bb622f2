import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lambdaDeadline } from '../support/lambda-deadline.ts'
import type { MockStep } from '../support/mock-openai.ts'

/**
 * Lambda's timeout and what runs outside a turn's model requests and tool calls: a compaction
 * (its summary call, its `pre_compact` and `session_start` hooks) and the start hooks of
 * `POST /v1/sessions` stop before it. A compaction so stopped keeps nothing, the turn pauses,
 * and its continuation compacts once; one asked for by `POST …/compact` (or
 * `POST /v1/responses/compact`) answers 409 `out_of_time`, retryable, and compacts when sent again.
 */
const lambda = lambdaDeadline('lambda-deadline-compaction')
const { clock, mock, call, model, storedEvents, storedKeys } = lambda

/**
 * The hooks' receiver: the first request whose body matches `hangOn` arrives with 9 s left
 * (under the 10 s margin) and is never answered; every other one is answered `{}`.
 */
let gate: Server
let gateUrl = ''
let hangOn: RegExp | undefined
const hookBodies: string[] = []
beforeAll(async () => {
  gate = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    request.on('end', () => {
      hookBodies.push(body)
      if (hangOn?.test(body)) {
        hangOn = undefined
        clock.left = 9_000
        return
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve))
  gateUrl = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`
})
afterAll(async () => {
  gate.closeAllConnections()
  await new Promise<void>((resolve) => gate.close(() => resolve()))
})

const hook = (event: string) => ({
  event,
  type: 'http',
  name: 'audit',
  url: `${gateUrl}/${event}`,
  timeout_ms: 120_000,
})

/** A session whose sixth turn compacts (a local summary): five turns, the last counted near its limit. */
async function nearItsLimit(hooks: object[] = []): Promise<string> {
  const created = await call('POST', '/v1/sessions', {
    model: { name: 'gpt-4o-mini', api: 'chat' },
    harness: { max_context_tokens: 2000 },
    hooks,
  })
  expect(created.status).toBe(201)
  const id = (JSON.parse(created.text) as { session_id: string }).session_id
  for (let n = 1; n <= 5; n++) {
    const usage = { input_tokens: n === 5 ? 1850 : 100, output_tokens: 5 }
    model({ step: { text: `answer ${n}`, usage } })
    const turn = await call('POST', `/v1/sessions/${id}/turns`, { input: `task ${n}` })
    expect(JSON.parse(turn.text).status).toBe('completed')
  }
  return id
}

const boundaries = async (id: string) =>
  (await storedEvents(id)).filter((event) => event.type === 'thread.compact_boundary')
const archives = async (id: string) =>
  (await storedKeys(`history/${id}_`)).filter((key) => key.endsWith('.jsonl'))

/** The session's usage counters (GET /v1/sessions/:id) and the tenant's tokens today (GET /v1/usage). */
const counted = async (id: string) => {
  const session = JSON.parse((await call('GET', `/v1/sessions/${id}`)).text) as {
    usage: { input_tokens: number; output_tokens: number }
  }
  const today = JSON.parse((await call('GET', '/v1/usage')).text) as {
    tokens: { used: number }
  }
  const { input_tokens, output_tokens } = session.usage
  return { input: input_tokens, output: output_tokens, tenant: today.tokens.used }
}

/** Asserts `input` and `output` tokens more than `before` in the session, and their sum in the tenant's day. */
async function countedSince(
  id: string,
  before: Awaited<ReturnType<typeof counted>>,
  input: number,
  output: number,
) {
  expect(await counted(id)).toEqual({
    input: before.input + input,
    output: before.output + output,
    tenant: before.tenant + input + output,
  })
}

/** The turn that compacts paused, keeping nothing of it; continued, it compacts once and ends. */
async function stoppedThenContinued(id: string, summary: { step: MockStep; onAsked?: () => void }) {
  const asked = mock().requests.length
  model(summary, { step: { text: 'Summary.' } }, { step: { text: 'answer 6' } })
  const first = await call('POST', `/v1/sessions/${id}/turns`, { input: 'task 6' })
  const answer = JSON.parse(first.text) as { status: string; warnings: string[] }
  expect(answer.status).toBe('waiting')
  const warned = answer.warnings.join('\n')
  expect(warned).toContain("paused: the request's time ran out while the session was compacted")
  // Nothing of the stopped compaction: no boundary, no archive, no hook's failure.
  expect(warned).not.toContain('hook audit')
  expect(await boundaries(id)).toEqual([])
  expect(await archives(id)).toEqual([])
  // Only the summary call was made; the turn's own request was not sent.
  expect(mock().requests).toHaveLength(asked + 1)

  clock.left = 300_000
  const next = await call('POST', `/v1/sessions/${id}/turns`, {})
  expect(JSON.parse(next.text).status).toBe('completed')
  expect(await boundaries(id)).toHaveLength(1)
  expect(await archives(id)).toHaveLength(1)
  expect(mock().requests).toHaveLength(asked + 3)
}

describe('Lambda: a compaction stops before the function timeout and keeps nothing', () => {
  it('its summary call still answering is stopped; the continuation compacts once', async () => {
    const id = await nearItsLimit()
    // Asked with 9 s left, the summary would take 20 s: it is stopped within a second.
    const onAsked = () => {
      clock.left = 9_000
    }
    await stoppedThenContinued(id, { step: { text: 'Summary.', delayMs: 20_000 }, onAsked })
  }, 60_000)

  it.each([
    ['pre_compact', /"hook_event_name":"PreCompact"/],
    ['session_start', /"source":"compact"/],
  ])(
    'its %s hook still running is stopped; its archive is removed',
    async (event, body) => {
      const id = await nearItsLimit([hook(event)])
      hookBodies.length = 0
      hangOn = body
      await stoppedThenContinued(id, { step: { text: 'Summary.' } })
      // The hook ran for the stopped compaction and again for the one kept.
      expect(hookBodies.filter((sent) => body.test(sent))).toHaveLength(2)
    },
    60_000,
  )
})

describe('Lambda: what a stopped compaction used is counted once', () => {
  it("an automatic one stopped after its summary call: the session and the tenant count it, and the continuation's", async () => {
    const id = await nearItsLimit([hook('pre_compact')])
    const before = await counted(id)
    hangOn = /"hook_event_name":"PreCompact"/
    const usage = (input_tokens: number, output_tokens: number) => ({ input_tokens, output_tokens })
    model({ step: { text: 'Summary.', usage: usage(300, 20) } })
    const first = await call('POST', `/v1/sessions/${id}/turns`, { input: 'task 6' })
    expect(JSON.parse(first.text).status).toBe('waiting')
    await countedSince(id, before, 300, 20)
    // The continuation asks the summary again (billed again): counted again, then its answer.
    clock.left = 300_000
    model(
      { step: { text: 'Summary.', usage: usage(400, 30) } },
      { step: { text: 'answer 6', usage: usage(200, 7) } },
    )
    const next = await call('POST', `/v1/sessions/${id}/turns`, {})
    expect(JSON.parse(next.text).status).toBe('completed')
    expect(await boundaries(id)).toHaveLength(1)
    await countedSince(id, before, 900, 57)
  }, 60_000)
})

describe('Lambda: a compaction asked for by hand stops before the function timeout', () => {
  /** Asked with 9 s left, the summary would take 20 s: it is stopped within a second. */
  const slowSummary = {
    step: { text: 'Summary.', delayMs: 20_000 },
    onAsked: () => {
      clock.left = 9_000
    },
  }
  const post = (path: string, body: object, headers: Record<string, string> = {}) =>
    lambda.fetch(`https://lambda.test${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${lambda.key}`,
        'content-type': 'application/json',
        ...headers,
      },
      body: JSON.stringify(body),
    })

  it('POST …/compact keeps nothing and answers 409 out_of_time, retryable; sent again it compacts once', async () => {
    const id = await nearItsLimit()
    const asked = mock().requests.length
    model(slowSummary)
    const key = { 'idempotency-key': 'compact-out-of-time-1' }
    const started = Date.now()
    const first = await post(`/v1/sessions/${id}/compact`, {}, key)
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(first.status).toBe(409)
    expect(first.headers.get('retry-after')).toBe('1')
    const error = (
      (await first.json()) as { error: { code: string; message: string; details: object } }
    ).error
    expect(error).toMatchObject({ code: 'conflict', details: { reason: 'out_of_time' } })
    expect(error.message).toContain("the request's time ran out while the transcript was compacted")
    expect(error.message).toContain('nothing of that compaction is kept')
    expect(await boundaries(id)).toEqual([])
    expect(await archives(id)).toEqual([])

    // The same request again, with the time a request has: it compacts, once, under the same key.
    clock.left = 300_000
    model({ step: { text: 'Summary.' } })
    const again = await post(`/v1/sessions/${id}/compact`, {}, key)
    expect(again.status).toBe(200)
    const answer = (await again.json()) as { status: string; events: { type: string }[] }
    expect(answer.status).toBe('completed')
    expect(answer.events.map((event) => event.type)).toEqual(['thread.compact_boundary'])
    const replayed = await post(`/v1/sessions/${id}/compact`, {}, key)
    expect(await replayed.json()).toEqual(answer)
    expect(await boundaries(id)).toHaveLength(1)
    expect(await archives(id)).toHaveLength(1)
    expect(mock().requests).toHaveLength(asked + 2)
  }, 60_000)

  it("POST …/compact stopped after its summary call counts that call's usage once; its retry's too", async () => {
    const id = await nearItsLimit([hook('pre_compact')])
    const before = await counted(id)
    // The summary answers (320 tokens); the pre_compact hook then holds the request to the margin.
    hangOn = /"hook_event_name":"PreCompact"/
    model({ step: { text: 'Summary.', usage: { input_tokens: 300, output_tokens: 20 } } })
    const key = { 'idempotency-key': 'compact-out-of-time-usage' }
    const first = await post(`/v1/sessions/${id}/compact`, {}, key)
    expect(first.status).toBe(409)
    expect(await boundaries(id)).toEqual([])
    // The provider billed the summary: the session counts it though nothing else was kept, in a
    // batch that says so with a non-fatal error item.
    expect((await storedEvents(id)).at(-1)).toMatchObject({
      type: 'item.completed',
      item: { type: 'error', message: expect.stringContaining("its model call's usage") },
    })
    await countedSince(id, before, 300, 20)

    // Sent again, the summary is asked again (billed again) and counted again, once; replayed, not.
    clock.left = 300_000
    model({ step: { text: 'Summary.', usage: { input_tokens: 400, output_tokens: 30 } } })
    expect((await post(`/v1/sessions/${id}/compact`, {}, key)).status).toBe(200)
    expect((await post(`/v1/sessions/${id}/compact`, {}, key)).status).toBe(200)
    expect(await boundaries(id)).toHaveLength(1)
    await countedSince(id, before, 700, 50)
  }, 60_000)

  it('POST /v1/responses/compact answers 409 out_of_time, retryable', async () => {
    model(slowSummary)
    const started = Date.now()
    const answer = await post('/v1/responses/compact', {
      model: 'gpt-4o-mini',
      input: [
        { type: 'message', role: 'user', content: 'Remember the code word: slate.' },
        { type: 'message', role: 'assistant', content: 'OK.' },
      ],
    })
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(answer.status).toBe(409)
    expect(answer.headers.get('retry-after')).toBe('1')
    expect(JSON.stringify(await answer.json())).toContain('out_of_time')
  }, 60_000)
})

describe('Lambda: POST /v1/sessions', () => {
  it('its session_start hook still running is stopped: the session is created', async () => {
    hangOn = /"source":"startup"/
    const started = Date.now()
    const created = await call('POST', '/v1/sessions', { hooks: [hook('session_start')] })
    // The hook would have held the request 120 s; it is stopped at the margin.
    expect(created.status).toBe(201)
    expect(Date.now() - started).toBeLessThan(30_000)
    const id = (JSON.parse(created.text) as { session_id: string }).session_id
    expect((await storedEvents(id)).map((event) => event.type)).toEqual(['thread.started'])
  }, 60_000)
})
