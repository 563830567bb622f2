import { describe, expect, it, vi } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { serializeEvent } from '../../src/contract/serialize.ts'
import { FakeSessionApi } from '../support/fake-session-api.ts'

const json = { 'content-type': 'application/json' }

function setup() {
  const api = new FakeSessionApi()
  const logged: Record<string, unknown>[] = []
  const app = createApp({ api, auth: { keys: [] }, log: (entry) => logged.push(entry) })
  const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
    app.request(path, {
      method: 'POST',
      headers: { ...json, ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  return { api, app, logged, post }
}

async function created(post: ReturnType<typeof setup>['post']): Promise<string> {
  const res = await post('/v1/sessions', { workspace: 'ws1' })
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

describe('routes', () => {
  it('serves health, the OpenAPI document and the docs page without auth', async () => {
    const app = createApp({
      api: new FakeSessionApi(),
      auth: { keys: [{ key: 'k'.repeat(20), tenant: 't1' }] },
    })
    const health = await app.request('/healthz')
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })

    const openapi = await app.request('/v1/openapi.json')
    expect(openapi.status).toBe(200)
    const doc = (await openapi.json()) as { openapi: string; paths: Record<string, object> }
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/sessions',
        '/v1/sessions/{id}',
        '/v1/sessions/{id}/turns',
        '/v1/sessions/{id}/events',
        '/v1/sessions/{id}/complete',
        '/v1/sessions/{id}/cancel',
        '/v1/exec',
      ]),
    )

    const text = JSON.stringify(doc)
    const schemas = (doc as unknown as { components: { schemas: Record<string, object> } })
      .components.schemas
    const refs = [...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1])
    expect(refs.length).toBeGreaterThan(5)
    for (const name of refs) expect(schemas, String(name)).toHaveProperty(String(name))
    expect(doc).toHaveProperty([
      'paths',
      '/v1/sessions',
      'post',
      'requestBody',
      'content',
      'application/json',
      'schema',
      'properties',
      'tools',
    ])
    expect(schemas).toHaveProperty('ThreadEvent.oneOf')

    const docs = await app.request('/docs')
    expect(docs.status).toBe(200)
    expect(docs.headers.get('content-type')).toContain('text/html')
    expect(docs.headers.get('content-security-policy')).toContain("default-src 'none'")
    const html = await docs.text()
    expect(html).toMatch(/<meta\s+name="viewport"\s+content="width=device-width, initial-scale=1"/)
    // No renderer copy given to this app: the page loads the pinned version from the CDN.
    expect(html).toMatch(
      /<script src="https:\/\/cdn\.jsdelivr\.net\/npm\/@scalar\/api-reference@\d+\.\d+\.\d+"><\/script>/,
    )
    expect(html).toContain('<script src="/docs/init.js"></script>')
    expect(html).not.toMatch(/<script>|<script type/)
    const init = await app.request('/docs/init.js')
    expect(await init.text()).toContain("url: '/v1/openapi.json'")
    expect((await app.request('/docs/scalar.js')).status).toBe(404)

    // With a copy, the page loads it from this origin and its CSP allows no other.
    const local = createApp({
      api: new FakeSessionApi(),
      auth: { keys: [] },
      referenceScript: async () => new TextEncoder().encode('window.Scalar = {}'),
    })
    const page = await local.request('/docs')
    expect(await page.text()).toContain('<script src="/docs/scalar.js"></script>')
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self';")
    expect(page.headers.get('content-security-policy')).not.toContain('https:')
    const script = await local.request('/docs/scalar.js')
    expect(script.headers.get('content-type')).toContain('text/javascript')
    expect(await script.text()).toBe('window.Scalar = {}')
  })

  it('creates, reads and lists sessions', async () => {
    const { app, post } = setup()
    const id = await created(post)
    const one = await app.request(`/v1/sessions/${id}`)
    expect(one.status).toBe(200)
    expect(await one.json()).toMatchObject({ session_id: id, workspace: 'ws1', status: 'active' })

    const list = await app.request('/v1/sessions?workspace=ws1&limit=10')
    expect(await list.json()).toMatchObject({ sessions: [{ session_id: id }] })
    const none = await app.request('/v1/sessions?workspace=other&status=completed')
    expect(await none.json()).toEqual({ sessions: [] })
  })

  it('accepts a bare POST (no body) as {} where every field is optional', async () => {
    const { app } = setup()
    const res = await app.request('/v1/sessions', { method: 'POST' })
    expect(res.status).toBe(201)
  })

  it('steps a turn and answers JSON whose events are the canonical serialization', async () => {
    const { post } = setup()
    const id = await created(post)
    const res = await post(`/v1/sessions/${id}/turns`, { input: 'hello "you"\n' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    const text = await res.text()
    const body = JSON.parse(text) as { events: Parameters<typeof serializeEvent>[0][] }
    expect(body).toMatchObject({ turn_id: 'turn-1', status: 'completed', next_seq: 4 })
    const canonical = body.events.map((event) => serializeEvent(event)).join(',')
    expect(text).toContain(`"events":[${canonical}]`)
    expect(text.indexOf('"turn_id"')).toBe(1)
  })

  it('completes and cancels, and a turn after thread.completed is 409 session_completed', async () => {
    const { post } = setup()
    const id = await created(post)
    const done = await post(`/v1/sessions/${id}/complete`)
    expect(done.status).toBe(200)
    expect(await done.json()).toMatchObject({
      status: 'terminal',
      events: [{ type: 'thread.completed', subtype: 'success' }],
    })
    const after = await post(`/v1/sessions/${id}/turns`, { input: 'more' })
    expect(after.status).toBe(409)
    expect(await after.json()).toMatchObject({ error: { code: 'session_completed' } })

    const other = await created(post)
    const cancelled = await post(`/v1/sessions/${other}/cancel`, {})
    expect(await cancelled.json()).toMatchObject({ events: [{ subtype: 'cancelled' }] })
  })

  it('answers unknown paths with a JSON 404 and wrong methods with 405 and Allow', async () => {
    const { app } = setup()
    for (const path of ['/nope', '/v1/sessions/x/nope', '/v1/sessions/x/turns/y']) {
      const res = await app.request(path, { method: 'GET' })
      expect(res.status, path).toBe(404)
      expect(await res.json()).toMatchObject({ error: { code: 'not_found' } })
    }
    for (const [method, path, allow] of [
      ['GET', '/v1/exec', 'POST, OPTIONS'],
      ['PUT', '/v1/sessions/x', 'GET, DELETE, HEAD, OPTIONS'],
      ['PUT', '/v1/sessions/x/turns', 'GET, POST, HEAD, OPTIONS'],
      ['POST', '/v1/sessions/x/events', 'GET, HEAD, OPTIONS'],
    ] as const) {
      const res = await app.request(path, { method })
      expect(res.status, `${method} ${path}`).toBe(405)
      expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow)
      expect(await res.json()).toMatchObject({ error: { code: 'method_not_allowed' } })
    }
  })
})

describe('error mapping', () => {
  const cases: [TurnlineError, number][] = [
    [new TurnlineError('invalid_input', 'x'), 400],
    [new TurnlineError('unauthorized', 'x'), 401],
    [new TurnlineError('not_found', 'x'), 404],
    [new TurnlineError('conflict', 'x'), 409],
    [new TurnlineError('follow_up_queue_full', 'x'), 409],
    [new TurnlineError('payload_too_large', 'x'), 413],
    [new TurnlineError('model_not_configured', 'set OPENAI_API_KEY'), 422],
    [new TurnlineError('model_error', 'x'), 502],
    [new TurnlineError('storage_unavailable', 'x'), 503],
    [new TurnlineError('coordinator_unavailable', 'x'), 503],
    [new TurnlineError('runner_unavailable', 'x'), 503],
    [new TurnlineError('corrupt_data', 'x'), 500],
    [new TurnlineError('internal', 'x'), 500],
  ]

  it.each(cases)('%s → %i', async (error, status) => {
    const { app, api, logged } = setup()
    api.failNext = error
    const res = await app.request('/v1/sessions/s1')
    expect(res.status).toBe(status)
    expect(await res.json()).toEqual({ error: { code: error.code, message: error.message } })
    expect(logged.length > 0).toBe(status >= 500)
  })

  it('sets Retry-After on session_busy from retryAfter (rounded up) and keeps details', async () => {
    const { api, post } = setup()
    const id = await created(post)
    api.failNext = new TurnlineError('session_busy', 'busy', {
      retryAfter: 2.2,
      details: { session_id: id },
    })
    const res = await post(`/v1/sessions/${id}/turns`, { input: 'x' })
    expect(res.status).toBe(409)
    expect(res.headers.get('retry-after')).toBe('3')
    expect(await res.json()).toEqual({
      error: { code: 'session_busy', message: 'busy', details: { session_id: id } },
    })
  })

  it('hides unknown faults behind a generic 500 and logs the detail', async () => {
    const { app, api, logged } = setup()
    api.failNext = new Error('db password is hunter2')
    const res = await app.request('/v1/sessions/s1')
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'internal' } })
    expect(text).not.toContain('hunter2')
    expect(text).not.toContain('at ')
    expect(JSON.stringify(logged)).toContain('hunter2')

    api.failNext = 'a string'
    expect((await app.request('/v1/sessions/s1')).status).toBe(500)
  })

  it('logs a fault on stderr as a JSON line with ts, level and msg when no log is given', async () => {
    const api = new FakeSessionApi()
    const app = createApp({ api, auth: { keys: [] } })
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      api.failNext = new TurnlineError('storage_unavailable', 'the store did not answer')
      expect((await app.request('/v1/sessions/s1')).status).toBe(503)
      const line = JSON.parse(String(stderr.mock.calls[0]?.[0])) as { ts?: string }
      expect(line).toMatchObject({ level: 'error', msg: 'request failed' })
      expect(Date.parse(line.ts ?? '')).not.toBeNaN()
    } finally {
      stderr.mockRestore()
    }
  })
})
