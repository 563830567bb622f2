import { describe, expect, it } from 'vitest'
import {
  createDemoModelClient,
  DEMO_MODEL_NAME,
} from '../../adapters/demo-model/demo-model-client.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { createApp } from '../../functions/app.ts'
import type { AuthConfig } from '../../functions/http/auth.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { randomIds } from '../../src/shared/random-ids.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { SessionStore } from '../../src/store/session-store.ts'

type Entry = Record<string, unknown>

/** The real app and engine on memory adapters with the offline demo model, logging into `lines`. */
function setup(auth: AuthConfig = { keys: [] }) {
  const lines: Entry[] = []
  const model = createDemoModelClient()
  const api = new SessionService({
    sessions: new SessionStore({ store: new MemoryObjectStore() }),
    coordinator: new MemoryCoordinator(),
    models: () => model,
    clock: systemClock,
    ids: randomIds,
    tools: {
      fetch: (...args) => fetch(...args),
      allowedHosts: [],
      secretFor: () => 'unused-secret-0123456789',
      timeoutMs: 1000,
      maxResponseBytes: 1024,
    },
    defaults: {
      model: DEMO_MODEL_NAME,
      modelApi: 'chat',
      leaseMs: 10_000,
      idempotencyTtlSeconds: 60,
    },
    log: () => {},
  })
  const app = createApp({ api, auth, log: () => {}, requestLog: (entry) => lines.push(entry) })
  const call = (path: string, init: RequestInit = {}) => app.request(path, init)
  const json = { 'content-type': 'application/json' }
  return { lines, call, json }
}

const ofKind = (lines: Entry[], msg: string) => lines.filter((l) => l.msg === msg)

describe('operator log', () => {
  it('writes one line per request and per turn, with route, session, turn and model calls', async () => {
    const { lines, call, json } = setup()
    const created = (await (await call('/v1/sessions', { method: 'POST' })).json()) as {
      session_id: string
    }
    const sid = created.session_id
    const turn = await call(`/v1/sessions/${sid}/turns`, {
      method: 'POST',
      headers: { ...json, 'idempotency-key': 'k1' },
      body: '{"input":"hello"}',
    })
    expect(turn.status).toBe(200)
    // A replay answers without the model: zero model calls.
    await call(`/v1/sessions/${sid}/turns`, {
      method: 'POST',
      headers: { ...json, 'idempotency-key': 'k1' },
      body: '{"input":"hello"}',
    })
    await call(`/v1/sessions/${sid}/complete`, { method: 'POST' })
    await call('/v1/nowhere')

    const requests = ofKind(lines, 'request')
    expect(requests.map((r) => [r.method, r.route, r.status, r.session])).toEqual([
      ['POST', '/v1/sessions', 201, undefined],
      ['POST', '/v1/sessions/:id/turns', 200, sid],
      ['POST', '/v1/sessions/:id/turns', 200, sid],
      ['POST', '/v1/sessions/:id/complete', 200, sid],
      ['GET', null, 404, undefined],
    ])
    for (const r of requests) {
      expect(r).toMatchObject({ level: 'info', ts: expect.any(String) })
      expect(r.duration_ms).toEqual(expect.any(Number))
    }
    expect(requests[0]).toMatchObject({ tenant: 'local', path: '/v1/sessions' })

    const turns = ofKind(lines, 'turn')
    expect(turns.map((t) => [t.op, t.session, t.turn, t.status, t.model_calls, t.outcome])).toEqual(
      [
        ['turn', sid, 'turn-1', 'completed', 1, undefined],
        ['turn', sid, 'turn-1', 'completed', 0, undefined],
        ['complete', sid, expect.any(String), 'terminal', 0, 'success'],
      ],
    )
    expect(turns[0]).toMatchObject({ tenant: 'local', events: expect.any(Number) })
  })

  it('logs a streamed turn when its stream ends, and a failed call with its error code', async () => {
    const { lines, call, json } = setup()
    const { session_id: sid } = (await (await call('/v1/sessions', { method: 'POST' })).json()) as {
      session_id: string
    }
    const streamed = await call(`/v1/sessions/${sid}/turns`, {
      method: 'POST',
      headers: { ...json, accept: 'text/event-stream' },
      body: '{"input":"run `ls`"}',
    })
    expect(ofKind(lines, 'request')).toHaveLength(1)
    const text = await streamed.text()
    expect(text).toContain('event: turn.result')
    const last = ofKind(lines, 'request').at(-1)
    expect(last).toMatchObject({ route: '/v1/sessions/:id/turns', status: 200, session: sid })
    expect(last?.aborted).toBeUndefined()

    await call(`/v1/sessions/${sid}/complete`, { method: 'POST' })
    const refused = await call(`/v1/sessions/${sid}/turns`, {
      method: 'POST',
      headers: json,
      body: '{"input":"again"}',
    })
    expect(refused.status).toBe(409)
    expect(ofKind(lines, 'turn').at(-1)).toMatchObject({
      op: 'turn',
      session: sid,
      error: 'session_completed',
      model_calls: 0,
    })
    expect(ofKind(lines, 'request').at(-1)).toMatchObject({ status: 409, session: sid })
  })

  it('logs unauthenticated requests without a tenant', async () => {
    const { lines, call } = setup({ keys: [{ key: 'k'.repeat(20), tenant: 'acme' }] })
    expect((await call('/v1/sessions')).status).toBe(401)
    expect(
      (await call('/v1/sessions', { headers: { authorization: `Bearer ${'k'.repeat(20)}` } }))
        .status,
    ).toBe(200)
    const requests = ofKind(lines, 'request')
    expect(requests[0]).toMatchObject({ status: 401, route: '/v1/sessions' })
    expect(requests[0]?.tenant).toBeUndefined()
    expect(requests[1]).toMatchObject({ status: 200, tenant: 'acme' })
  })
})

describe('GET /', () => {
  it('sends browsers to the viewer; other clients get the links', async () => {
    const { call } = setup()
    const browser = await call('/', { headers: { accept: 'text/html,application/xhtml+xml' } })
    expect(browser.status).toBe(302)
    expect(browser.headers.get('location')).toBe('/ui')
    const client = await call('/')
    expect(client.status).toBe(200)
    expect(await client.json()).toMatchObject({ docs: '/docs', openapi: '/v1/openapi.json' })
    expect(client.headers.get('link')).toContain('</docs>; rel="service-doc"')
  })
})
