import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { MAX_FOLLOWED_STREAMS_PER_TENANT } from '../../functions/http/followed-streams.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { until } from '../support/until.ts'

/**
 * One tenant's followed streams are bounded on a server (invariant 10): each holds a connection
 * and reads the store every poll until the follow limit, so past the bound the next is 429
 * while another tenant still follows; a stream that ends or is dropped gives its place back.
 */
const [KEY_A, KEY_B, KEY_C] = ['a', 'b', 'c'].map((t) => `followed-key-${t}-0123456789`) as [
  string,
  string,
  string,
]
const auth = { keys: [KEY_A, KEY_B, KEY_C].map((key) => ({ key, tenant: key.slice(0, 14) })) }
let engine: Awaited<ReturnType<typeof startEngine>>
let server: RunningServer

beforeAll(async () => {
  engine = await startEngine()
  const follow = { pollMs: 50, maxMs: 60_000, heartbeatMs: 10_000 }
  server = await serveApp(createApp({ api: engine.service, auth, follow, log: () => {} }))
})
afterAll(async () => {
  await server?.close()
  await engine?.close()
})

async function newSession(key: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  })
  return ((await res.json()) as { session_id: string }).session_id
}

/** A followed event stream of the session: its answer, and how to drop it. */
async function follow(key: string, session: string) {
  const abort = new AbortController()
  const res = await fetch(`${server.url}/v1/sessions/${session}/events?follow=1`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    signal: abort.signal,
  })
  return { res, drop: () => abort.abort() }
}

describe('followed streams of one tenant', () => {
  it('are bounded per tenant; a dropped one gives its place back', async () => {
    const session = await newSession(KEY_A)
    const held: Awaited<ReturnType<typeof follow>>[] = []
    try {
      for (let i = 0; i < MAX_FOLLOWED_STREAMS_PER_TENANT; i++) {
        const stream = await follow(KEY_A, session)
        held.push(stream)
        expect(stream.res.status).toBe(200)
      }
      const refused = await follow(KEY_A, session)
      expect(refused.res.status).toBe(429)
      expect(refused.res.headers.get('retry-after')).toBe('1')
      expect(await refused.res.json()).toMatchObject({
        error: { code: 'rate_limited', message: expect.stringContaining('followed streams') },
      })
      // Another tenant is not held back.
      const other = await follow(KEY_B, await newSession(KEY_B))
      expect(other.res.status).toBe(200)
      other.drop()
      // A dropped stream gives its place back (once the server sees the connection go).
      held.pop()?.drop()
      const again = await until('a place given back', async () => {
        const stream = await follow(KEY_A, session)
        return stream.res.status === 429 ? undefined : stream
      })
      expect(again.res.status).toBe(200)
      held.push(again)
    } finally {
      for (const stream of held) stream.drop()
    }
  })

  it('gives its place back when the stream ends (thread.completed)', async () => {
    const sessions = await Promise.all(
      Array.from({ length: MAX_FOLLOWED_STREAMS_PER_TENANT + 1 }, () => newSession(KEY_C)),
    )
    const streams = await Promise.all(sessions.slice(0, -1).map((id) => follow(KEY_C, id)))
    expect(streams.every((stream) => stream.res.status === 200)).toBe(true)
    // Completing a session ends its stream, which frees a place for the last session's.
    const done = await fetch(`${server.url}/v1/sessions/${sessions[0]}/complete`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_C}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(done.status).toBe(200)
    expect(await streams[0]?.res.text()).toContain('thread.completed')
    const last = await follow(KEY_C, sessions.at(-1) as string)
    expect(last.res.status).toBe(200)
    for (const stream of [...streams, last]) stream.drop()
  })
})
