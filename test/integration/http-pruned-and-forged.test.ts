import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type AppInstance, startAppInstance } from '../support/app-instance.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * Bad input on S3 + Upstash is a 4xx, never a 5xx: list cursors the server did not issue are
 * 400; a session pruned by retention is 404 everywhere (its Idempotency-Key, its events, a
 * process that still has it cached); and no error message names a storage key.
 */
const API_KEY = 'api-key-pruned-0123456789ab'
const KEY_LAYOUT = /\.vtcode|\.turnline|\/log\/|manifest\.json|sessions\//
let backends: TestBackends
let bucket: TestBackends['bucket']
let mock: MockOpenAI
let env: Record<string, string>
const instances: AppInstance[] = []

beforeAll(async () => {
  backends = await startTestBackends('pruned')
  ;({ bucket, mock } = backends)
  env = backends.env({ TURNLINE_API_KEYS: `${API_KEY}=tenant-p` })
})
afterAll(async () => {
  for (const instance of instances) await instance.close()
  await backends?.close()
})
beforeEach(() => mock.reset())

async function instance(): Promise<AppInstance> {
  const started = await startAppInstance(env)
  instances.push(started)
  return started
}

function call(on: AppInstance, method: string, path: string, body?: unknown, key?: string) {
  return fetch(`${on.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
      ...(key ? { 'idempotency-key': key } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
}

async function newSession(on: AppInstance, workspace: string): Promise<string> {
  const res = await call(on, 'POST', '/v1/sessions', { workspace })
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

/** Status and body; the body never names a storage key. */
async function answer(res: Response): Promise<{ status: number; body: string }> {
  const body = await res.text()
  expect(body).not.toMatch(KEY_LAYOUT)
  return { status: res.status, body }
}

describe('list cursors', () => {
  it('pages with opaque cursors and refuses any the server did not issue (400)', async () => {
    const a = await instance()
    const ids = new Set<string>()
    for (let i = 0; i < 5; i++) ids.add(await newSession(a, 'ws-list'))
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const query = `workspace=ws-list&limit=2${cursor ? `&cursor=${cursor}` : ''}`
      const res = await call(a, 'GET', `/v1/sessions?${query}`)
      expect(res.status).toBe(200)
      const page = (await res.json()) as { sessions: { session_id: string }[]; cursor?: string }
      seen.push(...page.sessions.map((s) => s.session_id))
      cursor = page.cursor
      expect(cursor ?? '').not.toMatch(KEY_LAYOUT)
      pages += 1
    } while (cursor && pages < 10)
    expect(seen.sort()).toEqual([...ids].sort())
    expect(pages).toBe(3)

    const first = (await (
      await call(a, 'GET', '/v1/sessions?workspace=ws-list&limit=2')
    ).json()) as {
      cursor: string
    }
    const forged = [
      'not-a-cursor',
      '1%2FSOMETOKEN%3D%3D',
      Buffer.from('{"v":1,"w":"ws-list","a":"../../other-tenant","f":true}').toString('base64url'),
      Buffer.from('{"v":2}').toString('base64url'),
      `${first.cursor}x`,
      'A'.repeat(2000),
    ]
    for (const cursor of forged) {
      const { status, body } = await answer(
        await call(a, 'GET', `/v1/sessions?workspace=ws-list&cursor=${cursor}`),
      )
      expect(status, `${cursor}: ${body}`).toBe(400)
      expect(JSON.parse(body)).toMatchObject({
        error: { code: 'invalid_input', details: { field: 'query.cursor' } },
      })
    }
    // A real cursor of another workspace does not list this one.
    const other = await answer(
      await call(a, 'GET', `/v1/sessions?workspace=ws-other&cursor=${first.cursor}`),
    )
    expect(other.status).toBe(400)
  })
})

describe('sessions pruned by retention', () => {
  it('are 404 everywhere: cached or not, by key, events, steering and turns', async () => {
    const a = await instance()
    const b = await instance()
    const id = await newSession(a, 'ws-prune')
    mock.enqueue({ text: 'done' })
    expect((await call(a, 'POST', `/v1/sessions/${id}/turns`, { input: 'hi' }, 'k-1')).status).toBe(
      200,
    )
    expect((await call(a, 'POST', `/v1/sessions/${id}/complete`, {})).status).toBe(200)
    // Both processes have the closed session cached.
    expect((await call(a, 'GET', `/v1/sessions/${id}`)).status).toBe(200)
    expect((await call(b, 'GET', `/v1/sessions/${id}`)).status).toBe(200)

    const pruned = await a.deps.service.sessions.retention('tenant-p', 'ws-prune', {
      policy: { maxSessions: 0, maxAgeDays: 30 },
    })
    expect(pruned.deleted).toEqual([id])

    const c = await instance()
    for (const on of [a, b, c]) {
      const requests: [string, string, unknown?, string?][] = [
        ['GET', `/v1/sessions/${id}`],
        ['POST', `/v1/sessions/${id}/turns`, { input: 'hi' }, 'k-1'],
        ['POST', `/v1/sessions/${id}/turns`, { input: 'again' }],
        ['GET', `/v1/sessions/${id}/events?after=-1`],
        ['POST', `/v1/sessions/${id}/intents`, { text: 'more' }],
        ['POST', `/v1/sessions/${id}/complete`, {}],
      ]
      for (const [method, path, body, key] of requests) {
        const { status, body: text } = await answer(await call(on, method, path, body, key))
        expect(status, `${method} ${path} ${key ?? ''}: ${text}`).toBe(404)
      }
    }
    expect(mock.requests).toHaveLength(1)
  })
})

describe('error messages', () => {
  it('name no storage key, also for corrupt data', async () => {
    const a = await instance()
    const damaged = await newSession(a, 'ws-corrupt')
    const holed = await newSession(a, 'ws-corrupt')
    for (const id of [damaged, holed]) {
      mock.enqueue({ text: 'one' }, { text: 'two' })
      expect((await call(a, 'POST', `/v1/sessions/${id}/turns`, { input: 'x' })).status).toBe(200)
      expect((await call(a, 'POST', `/v1/sessions/${id}/turns`, { input: 'y' })).status).toBe(200)
    }
    const batch = (id: string, n: number) =>
      `tenant-p/ws-corrupt/.vtcode/sessions/${id}/log/000000000${n}.json`
    // One session's batch 1 is damaged in place, the other's is gone (a hole below batch 2).
    const everything = bucket.store()
    await everything.put(batch(damaged, 1), new TextEncoder().encode('{"form'))
    await everything.delete(batch(holed, 1))
    const fresh = await instance()
    for (const id of [damaged, holed]) {
      const { status, body } = await answer(await call(fresh, 'GET', `/v1/sessions/${id}`))
      expect(status, body).toBe(500)
      expect(JSON.parse(body)).toMatchObject({ error: { code: 'corrupt_data' } })
    }
    // The server log still has the detail.
    expect(JSON.stringify(fresh.logs)).toContain('corrupt_data')
  })
})
