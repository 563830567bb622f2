import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * A tenant's followed streams are bounded on all instances together, through the coordinator's
 * Redis (Upstash here), not only on each process: `npm start` twice on S3 + Upstash with
 * TURNLINE_MAX_FOLLOWED_STREAMS=2 and a 10 s follow limit. A stream's slot is a lease: an
 * instance that crashes with streams open holds their slots only until they lapse, 10 s after
 * the follow limit, so the tenant is not shut out for good.
 */
const KEY = 'follow-shared-0123456789abcdef'
const OTHER = 'follow-other-0123456789abcdef'
let backends: TestBackends

beforeAll(async () => {
  backends = await startTestBackends('follow-shared')
}, 60_000)

afterAll(async () => {
  await backends?.close()
})

async function serve(): Promise<{ server: NodeEntry; url: string }> {
  const server = startNodeEntry(
    backends.env({
      PORT: '0',
      TURNLINE_API_KEYS: `${KEY}=shared,${OTHER}=other`,
      TURNLINE_MAX_FOLLOWED_STREAMS: '2',
      TURNLINE_FOLLOW_MAX_SECONDS: '10',
      TURNLINE_LOG: 'off',
    }),
  )
  onTestFinished(() => server.stop())
  return { server, url: await server.listening() }
}

async function newSession(url: string, key: string): Promise<string> {
  const res = await fetch(`${url}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  })
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

/** A followed event stream of the session on `url`: its answer, and how to drop it. */
async function follow(url: string, key: string, session: string) {
  const abort = new AbortController()
  const res = await fetch(`${url}/v1/sessions/${session}/events?follow=1`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    signal: abort.signal,
  })
  onTestFinished(() => abort.abort())
  return { res, drop: () => abort.abort() }
}

describe('followed streams of one tenant on two instances', () => {
  it('are bounded together; a dropped one gives its place back to either', async () => {
    const [one, two] = [await serve(), await serve()]
    const session = await newSession(one.url, KEY)
    const first = await follow(one.url, KEY, session)
    expect(first.res.status).toBe(200)
    expect((await follow(two.url, KEY, session)).res.status).toBe(200)
    // Each instance holds one: the third is refused on either (200 before: each counted its own).
    for (const url of [one.url, two.url]) {
      const refused = await follow(url, KEY, session)
      expect(refused.res.status).toBe(429)
      expect(Number(refused.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(await refused.res.json()).toMatchObject({
        error: { code: 'rate_limited', message: expect.stringContaining('followed streams') },
      })
    }
    // Another tenant is not held back.
    expect((await follow(two.url, OTHER, await newSession(two.url, OTHER))).res.status).toBe(200)
    first.drop()
    const again = await until('a place given back', async () => {
      const stream = await follow(two.url, KEY, session)
      return stream.res.status === 429 ? undefined : stream
    })
    expect(again.res.status).toBe(200)
  }, 60_000)

  it("frees a crashed instance's places once its streams' slots lapse", async () => {
    const [one, two] = [await serve(), await serve()]
    const session = await newSession(one.url, KEY)
    const opened = Date.now()
    for (let i = 0; i < 2; i++) expect((await follow(one.url, KEY, session)).res.status).toBe(200)
    await one.server.crash()
    // Nothing released them: the other instance still counts them.
    expect((await follow(two.url, KEY, session)).res.status).toBe(429)
    const freed = await until(
      'the crashed instance slots to lapse',
      async () => {
        const stream = await follow(two.url, KEY, session)
        return stream.res.status === 429 ? undefined : stream
      },
      40_000,
    )
    expect(freed.res.status).toBe(200)
    // Not before the follow limit (10 s) and the slot's grace (10 s) had passed.
    expect(Date.now() - opened).toBeGreaterThanOrEqual(19_000)
  }, 60_000)
})
