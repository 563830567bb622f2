import { describe, expect, it, vi } from 'vitest'
import {
  TurnlineAnswerTooLargeError,
  TurnlineClient,
  TurnlineConnectionError,
  TurnlineProtocolError,
} from '../../client/index.ts'
import { hostileHarness } from '../support/hostile-client.ts'
import { type Act, endless, type SeenRequest, stallAfter } from '../support/hostile-front.ts'

/**
 * The typed client's bounds in front of a server that misbehaves (test/support/hostile-client.ts):
 * a whole JSON answer past `maxAnswerBytes` fails the call instead of growing the client's memory
 * without end, and an exec stream or an events page that goes silent fails (or is read again)
 * instead of hanging the client for ever.
 */
const harness = hostileHarness()
const MAX = 1024 * 1024

const sessionGet = (request: SeenRequest) =>
  request.method === 'GET' && /^\/v1\/sessions\/[^/?]+$/.test(request.path)
const turnPost = (request: SeenRequest) =>
  request.method === 'POST' && /\/v1\/sessions\/[^/]+\/turns$/.test(request.path)
const endlessJson = endless(200, { 'content-type': 'application/json' }, '{"session_id":"', 'x')

/** A head that says the body is longer than the bound, then a few bytes and nothing more. */
const declaredTooLong: Act = async (res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX + 1) })
  res.write('{"turn_id":')
}

describe('a whole JSON answer past maxAnswerBytes', () => {
  it('fails the call, the rest not read', async () => {
    const { session_id: id } = await harness.direct.createSession()
    const { client } = await harness.through(sessionGet, endlessJson, { maxAnswerBytes: MAX })
    const error = await client.getSession(id).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TurnlineAnswerTooLargeError)
    expect(error).toBeInstanceOf(TurnlineProtocolError)
    expect(error).toMatchObject({ maxBytes: MAX, status: 200 })
    // An ordinary answer is far below it.
    const { client: bounded } = await harness.through(() => false, endlessJson, {
      maxAnswerBytes: MAX,
    })
    expect((await bounded.getSession(id)).session_id).toBe(id)
  }, 30_000)

  it("fails a turn's JSON answer, streamed or not, that says it is longer", async () => {
    const { session_id: id } = await harness.direct.createSession()
    for (const call of [
      (client: TurnlineClient) => client.stepTurn(id, { input: 'hello' }),
      (client: TurnlineClient) => client.streamTurn(id, { input: 'hello' }).result(),
    ]) {
      const { client } = await harness.through(turnPost, declaredTooLong, { maxAnswerBytes: MAX })
      const error = await call(client).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(TurnlineAnswerTooLargeError)
    }
  }, 30_000)

  it('is a positive integer', () => {
    const url = 'http://127.0.0.1:9'
    expect(() => new TurnlineClient({ baseUrl: url, maxAnswerBytes: 0 })).toThrow(TypeError)
  })
})

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

const pageGet = (request: SeenRequest) =>
  request.method === 'GET' && /\/events(\?|$)/.test(request.path) && !/follow=/.test(request.path)
/** The answer's head reaches the server's client, which never sends it on. */
const headNeverComes: Act = async (_res, forward) => {
  const answer = await forward()
  await answer.body?.cancel()
}

describe('a stream that goes silent', () => {
  it('fails an exec run, with its key: sent again with it, it runs once', async () => {
    const execPost = (request: SeenRequest) =>
      request.method === 'POST' && request.path === '/v1/exec'
    // The head and the first bytes of the run's lines, then nothing (the connection stays open).
    const { client, seen } = await harness.through(execPost, stallAfter(100))
    const request = { prompt: 'hello', workspace: 'exec-silent' }
    const error = await collect(client.exec(request, { idleTimeoutMs: 500 })).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(TurnlineConnectionError)
    const key = (error as TurnlineConnectionError).idempotencyKey
    expect(seen.filter(execPost)[0]?.headers['idempotency-key']).toBe(key)
    expect(seen.filter(execPost)[0]?.headers.prefer).toBe('keep-alive')

    const events = await vi.waitFor(
      () => collect(client.exec(request, { idempotencyKey: String(key) })),
      { timeout: 15_000, interval: 200 },
    )
    expect(events.at(-1)?.type).toBe('thread.completed')
    expect((await harness.direct.listSessions({ workspace: 'exec-silent' })).sessions).toHaveLength(
      1,
    )
  }, 30_000)

  it('fails an events page whose head or body never comes', async () => {
    const { session_id: id } = await harness.direct.createSession()
    await harness.direct.stepTurn(id, { input: 'hello' })
    for (const act of [stallAfter(50), headNeverComes]) {
      const { client } = await harness.through(pageGet, act)
      const started = Date.now()
      const error = await client.readEvents(id, {}, { idleTimeoutMs: 500 }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(TurnlineConnectionError)
      expect(Date.now() - started).toBeLessThan(5000)
    }
  }, 30_000)

  it('reads a silent page of the events again: every event once', async () => {
    const { session_id: id } = await harness.direct.createSession()
    await harness.direct.stepTurn(id, { input: 'hello' })
    const { client, seen } = await harness.through(pageGet, stallAfter(50))
    const events = await collect(client.events(id, { retry: { idleTimeoutMs: 500 } }))
    expect(events).toEqual((await harness.direct.readEvents(id)).events)
    expect(seen.filter(pageGet).length).toBeGreaterThanOrEqual(2)
  }, 30_000)
})

describe('an events page past its bounds', () => {
  const ndjson = { 'content-type': 'application/x-ndjson' }
  const event = { type: 'thread.started', thread_id: 't' }
  const line = `${JSON.stringify({ seq: 0, schema_version: '0.11.0', event })}\n`

  it('fails once it holds more events than asked for, the rest not read', async () => {
    const { client } = await harness.through(pageGet, endless(200, ndjson, '', line))
    const error = await client.readEvents('some-session', { limit: 10 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TurnlineProtocolError)
    expect(String(error)).toMatch(/passed the 10 events asked for/)
  }, 30_000)

  it('fails past maxBytes (the client’s maxAnswerBytes by default), the rest not read', async () => {
    // Lines of spaces: no event, no line past its cap, bytes without end.
    const blank = `${' '.repeat(1000)}\n`
    for (const [options, call] of [
      [{ maxAnswerBytes: MAX }, {}],
      [{}, { maxBytes: MAX }],
    ] as const) {
      const { client } = await harness.through(pageGet, endless(200, ndjson, '', blank), options)
      const error = await client.readEvents('some-session', {}, call).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(TurnlineAnswerTooLargeError)
      expect(error).toMatchObject({ maxBytes: MAX })
      expect(String(error)).toMatch(/an events page passed/)
    }
    // events() reads its pages under the client's bound, and does not read one again.
    const { client, seen } = await harness.through(pageGet, endless(200, ndjson, '', blank), {
      maxAnswerBytes: MAX,
    })
    const error = await collect(client.events('some-session')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TurnlineAnswerTooLargeError)
    expect(seen.filter(pageGet)).toHaveLength(1)
  }, 30_000)
})

describe('outputs.bytes of an artifact past its bound', () => {
  it('fails naming its size, its bytes not read; a range, maxBytes and open read it', async () => {
    const { session_id: id } = await harness.direct.createSession()
    await harness.direct.stepTurn(id, { input: 'run `seq 1 100000`' })
    const [kept] = (await harness.direct.outputs.list(id)).outputs
    if (!kept) throw new Error('the command output was not kept as an artifact')
    expect(kept.size).toBeGreaterThan(4096)
    const client = new TurnlineClient({ baseUrl: harness.url, maxAnswerBytes: 4096 })
    const error = await client.outputs.bytes(id, kept.artifact_id).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TurnlineAnswerTooLargeError)
    expect(error).toMatchObject({ maxBytes: 4096, size: kept.size })
    expect(String(error)).toContain(`holds ${kept.size} bytes`)
    expect(String(error)).toContain('outputs.open')
    const tooSmall = await client.outputs
      .bytes(id, kept.artifact_id, { maxBytes: 100 })
      .catch((e: unknown) => e)
    expect(tooSmall).toMatchObject({ maxBytes: 100, size: kept.size })

    const range = { start: 0, end: 4096 }
    expect(await client.outputs.bytes(id, kept.artifact_id, { range })).toHaveLength(4096)
    const whole = await client.outputs.bytes(id, kept.artifact_id, { maxBytes: kept.size })
    expect(whole).toHaveLength(kept.size)
    const opened = await client.outputs.open(id, kept.artifact_id)
    const streamed = new Uint8Array(await new Response(opened.body).arrayBuffer())
    expect(streamed).toEqual(whole)
  }, 60_000)
})
