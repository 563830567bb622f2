import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { type AppInstance, appInstances } from '../support/app-instance.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * A session deleted by one instance on S3 + Upstash, read through another instance that had
 * its location cached (the id pointer is cached for the life of the process): every route of
 * the session answers 404 there too, as for an unknown id, never 500 corrupt_data.
 */
const API_KEY = 'api-key-stale-location-0123456789'
let backends: TestBackends
const apps = appInstances(() => backends.env({ TURNLINE_API_KEYS: `${API_KEY}=acme` }))

beforeAll(async () => {
  backends = await startTestBackends('staleloc')
})
afterAll(async () => {
  await apps.close()
  await backends?.close()
})

const call = (on: AppInstance, method: string, path: string, body?: unknown) =>
  fetch(`${on.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
      'idempotency-key': `k-${crypto.randomUUID()}`,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })

describe('a session deleted by another instance', { timeout: 60_000 }, () => {
  it('is 404 on every route of an instance that had its location cached', async () => {
    const [a, b] = [await apps.start(), await apps.start()]
    const created = await call(a, 'POST', '/v1/sessions', { workspace: 'stale' })
    expect(created.status).toBe(201)
    const { session_id: id } = (await created.json()) as { session_id: string }
    backends.mock.enqueue({ text: 'Hello.' })
    expect((await call(a, 'POST', `/v1/sessions/${id}/turns`, { input: 'hi' })).status).toBe(200)
    expect((await call(a, 'GET', `/v1/sessions/${id}`)).status).toBe(200)

    expect((await call(b, 'DELETE', `/v1/sessions/${id}`)).status).toBe(204)

    const s = `/v1/sessions/${id}`
    const routes: [string, string, unknown?][] = [
      ['GET', s],
      ['GET', `${s}/events`],
      ['GET', `${s}/turns`],
      ['POST', `${s}/turns`, { input: 'again' }],
      ['GET', `${s}/artifacts`],
      ['GET', `${s}/orientation`],
      ['POST', `${s}/handoff`, {}],
      ['POST', `${s}/compact`, {}],
      ['POST', `${s}/intents`, { text: 'later' }],
      ['POST', `${s}/cancel`, {}],
      ['POST', `${s}/complete`, {}],
      ['POST', `${s}/fork`, {}],
      ['GET', `${s}/deliveries`],
      ['DELETE', s],
    ]
    const answers = []
    for (const [method, path, body] of routes) {
      const answer = await call(a, method, path, body)
      answers.push({ method, path, status: answer.status, body: await answer.text() })
    }
    for (const { method, path, status, body } of answers) {
      expect({ method, path, status }, body).toEqual({ method, path, status: 404 })
    }
  })

  it('is forgotten there once a read found it deleted: later reads look its pointer up', async () => {
    const [a, b] = [await apps.start(), await apps.start()]
    const created = await call(a, 'POST', '/v1/sessions', { workspace: 'stale' })
    const { session_id: id } = (await created.json()) as { session_id: string }
    expect((await call(a, 'GET', `/v1/sessions/${id}`)).status).toBe(200)
    expect((await call(b, 'DELETE', `/v1/sessions/${id}`)).status).toBe(204)
    expect((await call(a, 'GET', `/v1/sessions/${id}`)).status).toBe(404)

    const { sessions } = a.deps.service
    const pointer = sessions.keys({ tenant: 'acme', workspace: 'stale', sessionId: id }).pointer
    const requests = recordRequests(sessions.objects)
    for (const path of [`/v1/sessions/${id}`, `/v1/sessions/${id}/events`]) {
      expect((await call(a, 'GET', path)).status).toBe(404)
    }
    // One GET of the id pointer each, as for an unknown id; with the stale location kept, each
    // read got the manifest, listed the log and read the deleted-session marker instead.
    expect(requests).toEqual([`get ${pointer}`, `get ${pointer}`])
  })
})

/** The store requests made from now on, as `get <key>` and `list <prefix>`. */
function recordRequests(store: ObjectStore): string[] {
  const requests: string[] = []
  const { get, list } = store
  store.get = (key) => {
    requests.push(`get ${key}`)
    return get.call(store, key)
  }
  store.list = (prefix, options) => {
    requests.push(`list ${prefix}`)
    return list.call(store, prefix, options)
  }
  return requests
}
