import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { parseVersionedLine, serializeEvent } from '../../src/contract/serialize.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { echoTool } from '../support/engine-harness.ts'
import { gate } from '../support/gate.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { readSessionFiles } from '../support/session-files.ts'
import { parseSse } from '../support/sse-frames.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * The app over real HTTP, configured through createDeps like a deployment: S3ObjectStore on moto,
 * the Upstash coordinator through the REST proxy on redis-server, the OpenAI adapter on the mock
 * server, and a session-defined HTTP tool served by a receiver that verifies signatures.
 */
const KEY_A = 'key-a-0123456789abcdef'
const KEY_B = 'key-b-0123456789abcdef'
const MASTER = 'http-session-master-secret'

let backends: TestBackends
let bucket: TestBackends['bucket']
let mock: MockOpenAI
let receiver: Awaited<ReturnType<typeof startToolReceiver>>
let server: RunningServer

beforeAll(async () => {
  backends = await startTestBackends('http')
  ;({ bucket, mock } = backends)
  receiver = await startToolReceiver(createHmac('sha256', MASTER).update('tenant-a').digest('hex'))
  const deps = await createDeps(
    backends.env({
      TURNLINE_API_KEYS: `${KEY_A}=tenant-a,${KEY_B}=tenant-b`,
      TURNLINE_TOOL_SECRET: MASTER,
      TURNLINE_TOOL_ALLOWED_HOSTS: receiver.host,
      TURNLINE_FOLLOW_POLL_MS: '50',
    }),
  )
  const app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    ...deps.http,
    log: () => {},
  })
  server = await serveApp(app)
})
afterAll(async () => {
  await server?.close()
  await receiver?.close()
  await backends?.close()
})
beforeEach(() => {
  mock.reset()
  receiver.calls.length = 0
})

function call(
  key: string,
  path: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
) {
  return fetch(`${server.url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  })
}

async function createSession(body: object = {}): Promise<string> {
  const res = await call(KEY_A, '/v1/sessions', { method: 'POST', body: JSON.stringify(body) })
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

const turn = (id: string, input: string, headers: Record<string, string> = {}) =>
  call(KEY_A, `/v1/sessions/${id}/turns`, {
    method: 'POST',
    body: JSON.stringify({ input }),
    headers,
  })

/** The `"events":[…]` text of a TurnResponse JSON, split into the event texts. */
function eventTexts(json: string): string[] {
  const events = (JSON.parse(json) as { events: ThreadEvent[] }).events.map((e) =>
    serializeEvent(e),
  )
  expect(json).toContain(`"events":[${events.join(',')}]`)
  return events
}

/** The body, and how long before its end the first chunk arrived. */
/** Reads a streamed body to its end, telling `onText` what has arrived so far after each chunk. */
async function readLive(res: Response, onText: (soFar: string) => void): Promise<string> {
  const reader = res.body?.getReader()
  if (!reader) throw new Error('no body')
  const decoder = new TextDecoder()
  let text = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    onText(text)
  }
  return text
}

describe('a session over HTTP on S3 + Upstash + the OpenAI adapter', () => {
  it('runs a multi-turn session with a signed HTTP tool; JSON, SSE, NDJSON and events.jsonl agree', async () => {
    const answer = gate()
    onTestFinished(answer.open)
    const id = await createSession({ workspace: 'ws-http', tools: [echoTool(receiver.url)] })
    const seen: string[] = [`{"type":"thread.started","thread_id":"${id}"}`]

    mock.enqueue(
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"weather"}' }] },
      { text: 'It is sunny.' },
    )
    const first = await turn(id, 'Weather?')
    expect(first.status).toBe(200)
    seen.push(...eventTexts(await first.text()))

    mock.enqueue(
      { toolCalls: [{ id: 'call_2', name: 'lookup', arguments: '{"q":"wind"}' }], frameDelayMs: 5 },
      {
        text: 'Calm, a light breeze from the west.',
        chunkSize: 3,
        frameDelayMs: 5,
        hold: answer.promise,
      },
    )
    const second = await turn(id, 'And the wind?', { accept: 'text/event-stream' })
    expect(second.headers.get('content-type')).toContain('text/event-stream')
    // live: the tool events arrive while the second model call is still waiting (it answers
    // only once they have; a stream that held them back would never end)
    const streamed = await readLive(second, (soFar) => {
      if (soFar.includes('event: item.completed')) answer.open()
    })
    const sse = parseSse(streamed).frames
    const result = sse.at(-1)
    expect(result?.event).toBe('turn.result')
    const live = sse.slice(0, -1)
    expect(live.map((f) => f.data)).toEqual(eventTexts(result?.data ?? ''))
    expect(live.map((f) => Number(f.id))).toEqual(live.map((_, i) => seen.length + i))
    expect(live.map((f) => f.event)).toEqual(
      live.map((f) => (JSON.parse(f.data) as ThreadEvent).type),
    )
    expect(live.some((f) => f.event === 'item.updated')).toBe(true)
    seen.push(...live.map((f) => f.data))

    const done = await call(KEY_A, `/v1/sessions/${id}/complete`, { method: 'POST' })
    expect(done.status).toBe(200)
    seen.push(...eventTexts(await done.text()))
    expect(JSON.parse(seen.at(-1) ?? '')).toMatchObject({
      type: 'thread.completed',
      subtype: 'success',
      result: 'Calm, a light breeze from the west.',
      num_turns: 4,
    })
    expect(receiver.calls.map((c) => [c.signatureValid, c.body.arguments])).toEqual([
      [true, { q: 'weather' }],
      [true, { q: 'wind' }],
    ])
    mock.assertDone()

    // The rolled events in S3 (parts: S3 cannot append): every line valid, the same bytes as
    // every HTTP view
    const { lines, parts } = await readSessionFiles(bucket.store(), id)
    expect(parts?.length).toBeGreaterThan(0)
    for (const line of lines) expect(parseVersionedLine(line).schema_version).toBe('0.11.0')
    expect(lines).toEqual(seen.map((e) => `{"schema_version":"0.11.0","event":${e}}`))

    const ndjson = await (await call(KEY_A, `/v1/sessions/${id}/events`)).text()
    expect(ndjson).toBe(lines.map((line, seq) => `{"seq":${seq},${line.slice(1)}\n`).join(''))

    const feed = await call(KEY_A, `/v1/sessions/${id}/events?follow=1`, {
      headers: { accept: 'text/event-stream' },
    })
    const frames = parseSse(await feed.text()).frames
    expect(frames.map((f) => f.data)).toEqual(seen)
    expect(frames.map((f) => f.id)).toEqual(seen.map((_, i) => String(i)))

    const resumed = await call(KEY_A, `/v1/sessions/${id}/events`, {
      headers: { accept: 'text/event-stream', 'last-event-id': String(seen.length - 3) },
    })
    expect(parseSse(await resumed.text()).frames).toEqual(frames.slice(-2))

    const view = (await (await call(KEY_A, `/v1/sessions/${id}`)).json()) as Record<string, unknown>
    expect(view).toMatchObject({
      status: 'completed',
      last_seq: seen.length - 1,
      workspace: 'ws-http',
    })
  })

  it('lets exactly one of 10 concurrent turns run; the rest get 409 session_busy with Retry-After', async () => {
    const id = await createSession()
    // The one that runs is answered only once the nine others have been refused.
    const answer = gate()
    onTestFinished(answer.open)
    mock.enqueue({ text: 'only one', hold: answer.promise })
    let refused = 0
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        turn(id, `racer ${i}`).then((res) => {
          if (res.status === 409 && ++refused === 9) answer.open()
          return res
        }),
      ),
    )
    const statuses = responses.map((r) => r.status).sort()
    expect(statuses).toEqual([200, ...Array(9).fill(409)])
    for (const res of responses.filter((r) => r.status === 409)) {
      // The running turn renews its 60 s lease every 20 s: retried well before the lease lapses.
      const retryAfter = Number(res.headers.get('retry-after'))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(20)
      expect(await res.json()).toMatchObject({
        error: {
          code: 'session_busy',
          details: { turn: 'running', retry_after_seconds: retryAfter },
        },
      })
    }
    const events = (await (await call(KEY_A, `/v1/sessions/${id}/events`)).text())
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { event: ThreadEvent }).event)
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1)
    expect(events.filter((e) => e.type === 'turn.completed')).toHaveLength(1)
    expect(mock.requests).toHaveLength(1)
    mock.assertDone()
  })

  it('answers the same Idempotency-Key three times with identical bytes and one model call', async () => {
    const id = await createSession()
    mock.enqueue({ text: 'computed once' })
    const key = { 'idempotency-key': `retry-${id}` }
    const bodies: string[] = []
    for (let i = 0; i < 3; i++) {
      const res = await turn(id, 'same request', key)
      expect(res.status).toBe(200)
      bodies.push(await res.text())
    }
    expect(new Set(bodies).size).toBe(1)
    expect(JSON.parse(bodies[0] ?? '')).toMatchObject({ status: 'completed' })
    expect(mock.requests).toHaveLength(1)
    mock.assertDone()
  })

  it('queues steering intents (202), refuses the 17th (409), applies them next turn', async () => {
    const id = await createSession()
    const post = (text: string) =>
      call(KEY_A, `/v1/sessions/${id}/intents`, { method: 'POST', body: JSON.stringify({ text }) })
    for (let i = 1; i <= 16; i++) {
      const res = await post(`follow ${i}`)
      expect(res.status).toBe(202)
      expect(await res.json()).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), pending: i })
    }
    const full = await post('one too many')
    expect(full.status).toBe(409)
    expect(await full.json()).toMatchObject({ error: { code: 'follow_up_queue_full' } })
    expect((await post('')).status).toBe(400)
    expect(
      (await call(KEY_B, `/v1/sessions/${id}/intents`, { method: 'POST', body: '{"text":"x"}' }))
        .status,
    ).toBe(404)
    mock.enqueue({ text: 'all applied' })
    const res = await turn(id, 'go')
    expect(res.status).toBe(200)
    const body = (await res.json()) as { events: ThreadEvent[] }
    expect(body.events.filter((e) => e.type === 'interjected')).toHaveLength(16)
    expect((await post('room again')).status).toBe(202)
  })

  it('refuses a turn after thread.completed with 409 session_completed', async () => {
    const id = await createSession()
    const cancelled = await call(KEY_A, `/v1/sessions/${id}/cancel`, { method: 'POST', body: '{}' })
    expect(await cancelled.json()).toMatchObject({ events: [{ subtype: 'cancelled' }] })
    const res = await turn(id, 'too late')
    expect(res.status).toBe(409)
    expect(await res.json()).toMatchObject({ error: { code: 'session_completed' } })
    expect(mock.requests).toHaveLength(0)
  })

  it("hides one tenant's session from another tenant's key (404)", async () => {
    const id = await createSession()
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/events'],
      ['POST', '/turns'],
      ['POST', '/complete'],
      ['POST', '/cancel'],
    ] as const) {
      const res = await call(KEY_B, `/v1/sessions/${id}${suffix}`, { method })
      expect(res.status, `${method} ${suffix}`).toBe(404)
      expect(await res.json()).toMatchObject({ error: { code: 'not_found' } })
    }
    const listed = await call(KEY_B, '/v1/sessions')
    expect(await listed.json()).toEqual({ sessions: [] })
    expect((await call(KEY_A, `/v1/sessions/${id}`)).status).toBe(200)
    expect(mock.requests).toHaveLength(0)
  })
})
