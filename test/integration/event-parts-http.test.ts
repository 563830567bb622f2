import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import {
  parseSessionManifest,
  serializeSessionManifest,
} from '../../src/contract/session-manifest.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { toBytes } from '../../src/store/json-bytes.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { readSessionFiles, sessionFolder } from '../support/session-files.ts'
import { parseSse } from '../support/sse-frames.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * The events feed over HTTP on S3 (moto) when a session written before event parts (one
 * `events.jsonl`, a format-1 manifest) is rolled up into parts: `GET …/events` (NDJSON), its SSE
 * form and an SSE resume give the same bytes before and after, and they are the parts' lines.
 */
const KEY = 'key-parts-0123456789abcdef'
let backends: TestBackends
let server: RunningServer

/** The app over HTTP, on a fresh process-wide cache (createDeps), as a newly started server. */
async function startServer(): Promise<RunningServer> {
  const deps = await createDeps(backends.env({ TURNLINE_API_KEYS: `${KEY}=tenant-p` }))
  const app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    ...deps.http,
    log: () => {},
  })
  return serveApp(app)
}

beforeAll(async () => {
  backends = await startTestBackends('parts')
  server = await startServer()
})
afterAll(async () => {
  await server?.close()
  await backends?.close()
})

const call = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
  fetch(`${server.url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  })

async function turns(id: string, count: number) {
  for (let i = 0; i < count; i++) {
    backends.mock.enqueue({ text: `answer ${i} of ${count}` })
    const res = await call(`/v1/sessions/${id}/turns`, {
      method: 'POST',
      body: JSON.stringify({ input: `question ${i}` }),
    })
    expect(res.status, await res.clone().text()).toBe(200)
  }
}

/** NDJSON, SSE from the start and SSE resumed after seq 4: the feed's bytes. */
async function feeds(id: string) {
  const ndjson = await (await call(`/v1/sessions/${id}/events`)).text()
  const sse = await (
    await call(`/v1/sessions/${id}/events`, { headers: { accept: 'text/event-stream' } })
  ).text()
  const resumed = await (
    await call(`/v1/sessions/${id}/events`, {
      headers: { accept: 'text/event-stream', 'last-event-id': '4' },
    })
  ).text()
  return { ndjson, sse: parseSse(sse).frames, resumed: parseSse(resumed).frames }
}

describe('event parts over HTTP on S3', () => {
  it('serves the same feed before and after a format-1 events.jsonl becomes parts', async () => {
    const created = await call('/v1/sessions', { method: 'POST', body: '{}' })
    expect(created.status).toBe(201)
    const id = ((await created.json()) as { session_id: string }).session_id
    await turns(id, 3)
    const store = backends.bucket.store()
    // As a session written before parts: one events.jsonl, its etag in a format-1 manifest.
    const folder = await sessionFolder(store, id)
    const { lines, manifest } = await readSessionFiles(store, id)
    if (!manifest?.event_parts) throw new Error('no parts on S3')
    const { etag } = await store.put(
      `${folder}events.jsonl`,
      toBytes(lines.map((l) => `${l}\n`).join('')),
    )
    for (const [f, e] of manifest.event_parts) {
      const pad = (n: number) => String(n).padStart(10, '0')
      await store.delete(`${folder}events/${pad(f)}-${pad(e)}.jsonl`)
    }
    const { event_parts: _, ...legacy } = manifest
    const v1 = { ...legacy, format_version: 1 as const, rollup_etag: etag }
    await store.put(`${folder}manifest.json`, toBytes(serializeSessionManifest(v1)))
    // A server started on that bucket (nothing of the session in its memory) reads it as before
    await server.close()
    server = await startServer()
    const before = await feeds(id)
    expect(before.ndjson.split('\n').length).toBeGreaterThan(lines.length)

    // 16 more batches: the next manifest rolls the events up into parts
    await turns(id, 16)
    const after = await feeds(id)
    const stored = parseSessionManifest((await store.get(`${folder}manifest.json`))?.body ?? '')
    expect(stored.format_version).toBe(2)
    expect(await store.get(`${folder}events.jsonl`)).toBeNull()
    expect(after.ndjson.startsWith(before.ndjson)).toBe(true)
    expect(after.sse.slice(0, before.sse.length)).toEqual(before.sse)
    expect(after.resumed.slice(0, before.resumed.length)).toEqual(before.resumed)
    expect(after.resumed[0]?.id).toBe('5')
    // and every rolled line is the feed's, byte for byte
    const parts = await readSessionFiles(store, id)
    const ndjsonLines = after.ndjson.trimEnd().split('\n')
    parts.lines.forEach((line, seq) => {
      expect(ndjsonLines[seq]).toBe(`{"seq":${seq},${line.slice(1)}`)
    })
  }, 120_000)
})
