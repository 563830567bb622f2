import { describe, expect, it, vi } from 'vitest'
import {
  type SeqEvent,
  TurnlineApiError,
  TurnlineConnectionError,
  TurnlineProtocolError,
} from '../../client/index.ts'
import { hostileHarness } from '../support/hostile-client.ts'
import {
  answer,
  cutAfter,
  endless,
  type SeenRequest,
  stallAfter,
} from '../support/hostile-front.ts'

/**
 * The typed client in front of a server that misbehaves: `npm start`'s entry (the offline demo
 * model, sessions on disk) behind a real HTTP server that answers some requests itself or stalls
 * them part way (test/support/hostile-front.ts). A retried turn waits what the server asked and
 * runs once; a stream that goes silent is resumed; a frame, a line or an error page without end
 * fails the call instead of growing the client's memory without bound.
 */
const harness = hostileHarness()
const { through } = harness

const turnPost = (request: SeenRequest) =>
  request.method === 'POST' && /\/v1\/sessions\/[^/]+\/turns$/.test(request.path)

const errorBody = (code: string, message: string) => JSON.stringify({ error: { code, message } })

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

describe('a retried turn', () => {
  it("waits the Retry-After of a 429, past the backoff's longest pause, and runs once", async () => {
    const { session_id: id } = await harness.direct.createSession()
    const { client, seen } = await through(
      turnPost,
      answer(
        429,
        { 'content-type': 'application/json', 'retry-after': '2' },
        errorBody('rate_limited', 'the tenant sent too many requests'),
      ),
    )
    const turn = client.streamTurn(
      id,
      { input: 'hello' },
      { retry: { initialDelayMs: 20, maxDelayMs: 100 } },
    )
    const events = await collect(turn)
    const result = await turn.result()
    expect(result.status).toBe('completed')

    const posts = seen.filter(turnPost)
    expect(posts).toHaveLength(2)
    expect(posts[1]?.headers['idempotency-key']).toBe(posts[0]?.headers['idempotency-key'])
    expect(posts[0]?.headers['idempotency-key']).toBe(turn.idempotencyKey)
    // Sent again once the server's 2 s had passed, not after the 100 ms of the backoff.
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(1900)
    expect((await harness.direct.listTurns(id)).turns).toHaveLength(1)
    expect(events.map((e) => e.seq)).toEqual(
      (await harness.direct.readEvents(id)).events.map((e) => e.seq).filter((seq) => seq > 0),
    )
  })

  it("waits a gateway's 503 whose Retry-After is an HTTP-date", async () => {
    const { session_id: id } = await harness.direct.createSession()
    const { client, seen } = await through(turnPost, async (res) => {
      // Whole seconds: 3 s from now is 2 to 3 s away.
      const at = new Date(Date.now() + 3000).toUTCString()
      res.writeHead(503, { 'content-type': 'text/html', 'retry-after': at })
      res.end('<html>service unavailable</html>')
    })
    const turn = client.streamTurn(
      id,
      { input: 'hello' },
      { retry: { initialDelayMs: 20, maxDelayMs: 100 } },
    )
    expect((await turn.result()).status).toBe('completed')
    const posts = seen.filter(turnPost)
    expect(posts).toHaveLength(2)
    expect(posts[1]?.headers['idempotency-key']).toBe(posts[0]?.headers['idempotency-key'])
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(1500)
    expect((await harness.direct.listTurns(id)).turns).toHaveLength(1)
  })

  it('throws at once a Retry-After longer than it waits for', async () => {
    const { session_id: id } = await harness.direct.createSession()
    const { client, seen } = await through(
      turnPost,
      answer(
        429,
        { 'content-type': 'application/json', 'retry-after': '3600' },
        errorBody('too_many_concurrent_turns', 'the tenant runs too many turns'),
      ),
    )
    const turn = client.streamTurn(id, { input: 'hello' }, { retry: { maxRetryAfterMs: 10_000 } })
    const error = await turn.result().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TurnlineApiError)
    expect(error).toMatchObject({
      code: 'too_many_concurrent_turns',
      retryAfterSeconds: 3600,
      idempotencyKey: turn.idempotencyKey,
    })
    expect(seen.filter(turnPost)).toHaveLength(1)
    expect((await harness.direct.listTurns(id)).turns).toHaveLength(0)
  })
})

describe('an exec run cut short', () => {
  it('carries the Idempotency-Key it was sent with: sent again with it, it runs once', async () => {
    const execPost = (request: SeenRequest) =>
      request.method === 'POST' && request.path === '/v1/exec'
    const { client, seen } = await through(execPost, cutAfter(100))
    const request = { prompt: 'hello', workspace: 'exec-cut' }
    const error = await collect(client.exec(request)).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TurnlineConnectionError)
    const key = (error as TurnlineConnectionError).idempotencyKey
    expect(key).toBeDefined()
    expect(seen.filter(execPost)[0]?.headers['idempotency-key']).toBe(key)

    // Sent again with its key (session_busy while the first still runs): the same run.
    const events = await vi.waitFor(
      () => collect(client.exec(request, { idempotencyKey: String(key) })),
      { timeout: 15_000, interval: 200 },
    )
    expect(events[0]?.type).toBe('thread.started')
    expect(events.at(-1)?.type).toBe('thread.completed')
    expect(seen.filter(execPost).map((r) => r.headers['idempotency-key'])).toContain(key)
    expect((await harness.direct.listSessions({ workspace: 'exec-cut' })).sessions).toHaveLength(1)
  }, 30_000)
})

describe('an Open Responses stream cut before it names its response', () => {
  it('carries the key it was given: sent again with it, the response runs once', async () => {
    const post = (request: SeenRequest) =>
      request.method === 'POST' && request.path === '/v1/responses'
    // The request reaches the server, which runs it; the line drops once its head is out.
    const { client, seen } = await through(post, cutAfter(0))
    const sessionsBefore = await sessionCount()
    const request = { input: 'hello', model: 'demo' }
    const key = 'responses-cut-key-1'
    const error = await collect(client.responses.stream(request, { idempotencyKey: key })).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(TurnlineConnectionError)
    expect(error).toMatchObject({ idempotencyKey: key })
    expect(seen.filter(post)[0]?.headers['idempotency-key']).toBe(key)

    // Sent again with its key: while the first request still runs, the server answers 409
    // session_busy naming the response, which the stream follows.
    const events = await vi.waitFor(
      async () => {
        const sent = await collect(client.responses.stream(request, { idempotencyKey: key }))
        expect(sent.at(-1)?.type).toBe('response.completed')
        return sent
      },
      { timeout: 15_000, interval: 200 },
    )
    const again = await vi.waitFor(
      () => client.responses.create(request, { idempotencyKey: key }),
      { timeout: 15_000, interval: 200 },
    )
    expect(again.id).toBe((events[0] as { response?: { id?: string } }).response?.id)
    expect(await sessionCount()).toBe(sessionsBefore + 1)
  }, 30_000)
})

async function sessionCount(): Promise<number> {
  const { workspaces } = await harness.direct.listWorkspaces()
  return workspaces.reduce((sum, w) => sum + w.sessions, 0)
}

describe('a stream that goes silent', () => {
  it('resumes a turn with the same key: every event once, one run', async () => {
    const { session_id: id } = await harness.direct.createSession()
    // The head and the first bytes of the live stream, then nothing (the connection stays open).
    const { client, seen } = await through(turnPost, stallAfter(120))
    const turn = client.streamTurn(id, { input: 'hello' }, { retry: { idleTimeoutMs: 500 } })
    const events = await collect(turn)
    expect((await turn.result()).status).toBe('completed')

    const posts = seen.filter(turnPost)
    expect(posts).toHaveLength(2)
    expect(posts[1]?.headers['idempotency-key']).toBe(posts[0]?.headers['idempotency-key'])
    expect((await harness.direct.listTurns(id)).turns).toHaveLength(1)
    const log = (await harness.direct.readEvents(id)).events.filter((e) => e.seq > 0)
    expect(events).toEqual(log)
  }, 20_000)

  it('resumes a turn whose answer never starts: the server runs it once', async () => {
    const { session_id: id } = await harness.direct.createSession()
    // The turn reaches the server and runs there; its answer never reaches the client.
    const { client, seen } = await through(turnPost, async (_res, forward) => {
      const answer = await forward()
      await answer.body?.cancel()
    })
    const turn = client.streamTurn(id, { input: 'hello' }, { retry: { idleTimeoutMs: 500 } })
    const events = await collect(turn)
    expect((await turn.result()).status).toBe('completed')

    const posts = seen.filter(turnPost)
    expect(posts).toHaveLength(2)
    expect(posts[1]?.headers['idempotency-key']).toBe(posts[0]?.headers['idempotency-key'])
    expect((await harness.direct.listTurns(id)).turns).toHaveLength(1)
    expect(events).toEqual((await harness.direct.readEvents(id)).events.filter((e) => e.seq > 0))
  }, 20_000)

  it('reconnects a followed feed with Last-Event-ID: every event once', async () => {
    const { session_id: id } = await harness.direct.createSession()
    await harness.direct.stepTurn(id, { input: 'hello' })
    const feed = (request: SeenRequest) =>
      request.method === 'GET' && /\/events\?follow=1/.test(request.path)
    const { client, seen } = await through(feed, stallAfter(300))
    const seenEvents: SeqEvent[] = []
    const following = (async () => {
      for await (const item of client.events(id, { follow: true, retry: { idleTimeoutMs: 500 } }))
        seenEvents.push(item)
    })()
    // The feed is resumed while the session still runs; then it ends at thread.completed.
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        if (seen.filter(feed).length >= 2) resolve()
      }, 50)
      setTimeout(() => {
        clearInterval(check)
        reject(new Error('the followed feed was not opened again'))
      }, 10_000)
    })
    await harness.direct.complete(id)
    await following

    const log = (await harness.direct.readEvents(id)).events
    expect(seenEvents).toEqual(log)
    const again = seen.filter(feed)[1]
    expect(Number(again?.headers['last-event-id'])).toBeGreaterThanOrEqual(0)
  }, 20_000)
})

describe('an answer without end', () => {
  it('fails a turn whose SSE line never ends, past 64 Mi characters', async () => {
    const { session_id: id } = await harness.direct.createSession()
    const { client } = await through(
      turnPost,
      endless(200, { 'content-type': 'text/event-stream' }, 'id: 1\ndata: ', 'x'),
    )
    const error = await client
      .stepTurn(id, { input: 'hello' }, { onEvent: () => {} })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TurnlineProtocolError)
    expect(String(error)).toMatch(/an SSE frame passed 64 Mi characters/)
  }, 60_000)

  it('fails an events page whose NDJSON line never ends', async () => {
    const { session_id: id } = await harness.direct.createSession()
    const { client } = await through(
      (request) => request.method === 'GET' && request.path.includes('/events'),
      endless(200, { 'content-type': 'application/x-ndjson' }, '{"seq":0,"event":"', 'x'),
    )
    const error = await client.readEvents(id).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TurnlineProtocolError)
    expect(String(error)).toMatch(/an NDJSON line passed 64 Mi characters/)
  }, 60_000)

  it('shows the start of an error page that never ends', async () => {
    const { client } = await through(
      (request) => request.path === '/v1/sessions/some-session',
      endless(502, { 'content-type': 'text/html' }, '<html>bad gateway', ' '),
    )
    const error = await client.getSession('some-session').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TurnlineApiError)
    expect(error).toMatchObject({ status: 502, code: 'http_error', retryable: true })
    expect(String(error)).toMatch(/HTTP 502: <html>bad gateway/)
  }, 20_000)
})
