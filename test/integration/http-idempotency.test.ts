import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type AppInstance, startAppInstance } from '../support/app-instance.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { requireServices } from '../support/services.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * Idempotency-Key on S3 + Upstash: a key is scoped to its session, remembers the request it was
 * first used with (the same key with another request is 422 idempotency_key_reused, never a
 * silent replay of the first answer), and its records hold across instances and restarts.
 */
const API_KEY = 'api-key-idempotency-0123456789'
let backends: TestBackends
let mock: MockOpenAI
let admin: IORedis
let env: Record<string, string>
const instances: AppInstance[] = []

beforeAll(async () => {
  backends = await startTestBackends('idem')
  ;({ mock } = backends)
  admin = new IORedis(requireServices().redisUrl)
  env = backends.env({ TURNLINE_API_KEYS: `${API_KEY}=idem-tenant` })
})
afterAll(async () => {
  for (const instance of instances) await instance.close()
  admin?.disconnect()
  await backends?.close()
})
beforeEach(() => mock.reset())

async function instance(): Promise<AppInstance> {
  const started = await startAppInstance(env)
  instances.push(started)
  return started
}

function call(on: AppInstance, path: string, body: unknown, key?: string) {
  return fetch(`${on.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${API_KEY}`,
      'content-type': 'application/json',
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: JSON.stringify(body),
  })
}

async function newSession(on: AppInstance): Promise<string> {
  const res = await call(on, '/v1/sessions', {})
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

const turn = (on: AppInstance, id: string, input: string, key?: string) =>
  call(on, `/v1/sessions/${id}/turns`, { input }, key)

/** The bare events of a `POST /v1/exec` answer (NDJSON), by type. */
async function execEvents(res: Response): Promise<{ type: string; thread_id?: string }[]> {
  expect(res.status).toBe(200)
  const lines = (await res.text()).trim().split('\n')
  return lines.map((line) => JSON.parse(line) as { type: string; thread_id?: string })
}

describe('Idempotency-Key', () => {
  it('runs POST /v1/exec in the request once per key, on any instance', async () => {
    const [a, b] = [await instance(), await instance()]
    mock.enqueue({ text: 'exec once' })
    const first = await execEvents(await call(a, '/v1/exec', { prompt: 'do it' }, 'exec-key-1'))
    const again = await execEvents(await call(b, '/v1/exec', { prompt: 'do it' }, 'exec-key-1'))
    expect(mock.requests).toHaveLength(1)
    expect(first.at(-1)?.type).toBe('thread.completed')
    expect(again.map((e) => e.type)).toEqual(first.map((e) => e.type))
    expect(again[0]?.thread_id).toBe(first[0]?.thread_id)
    const reused = await call(b, '/v1/exec', { prompt: 'something else' }, 'exec-key-1')
    expect(reused.status).toBe(422)
    expect(await reused.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } })
    // The same prompt with other settings is another request too.
    const other = { prompt: 'do it', instructions: 'be brief' }
    const resettled = await call(a, '/v1/exec', other, 'exec-key-1')
    expect(resettled.status).toBe(422)
    expect(await resettled.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } })
    expect(mock.requests).toHaveLength(1)
  })

  it('refuses the same key with another input (422) and still replays the first answer', async () => {
    const a = await instance()
    const id = await newSession(a)
    mock.enqueue({ text: 'first answer' })
    const first = await turn(a, id, 'summarize the report', 'k-1')
    expect(first.status).toBe(200)
    const firstText = await first.text()

    const reused = await turn(a, id, 'delete everything', 'k-1')
    expect(reused.status).toBe(422)
    expect(await reused.json()).toMatchObject({
      error: { code: 'idempotency_key_reused', details: { field: 'header.idempotency-key' } },
    })
    // A turn without input is another request too.
    expect((await call(a, `/v1/sessions/${id}/turns`, {}, 'k-1')).status).toBe(422)
    // So is the key on another operation of the session.
    expect((await call(a, `/v1/sessions/${id}/compact`, {}, 'k-1')).status).toBe(422)

    const retried = await turn(a, id, 'summarize the report', 'k-1')
    expect(retried.status).toBe(200)
    expect(await retried.text()).toBe(firstText)
    expect(mock.requests).toHaveLength(1)
  })

  it('scopes keys to their session: the same key on two sessions runs two turns', async () => {
    const a = await instance()
    const one = await newSession(a)
    const two = await newSession(a)
    mock.enqueue({ text: 'for one' }, { text: 'for two' })
    const first = await turn(a, one, 'hello', 'shared-key')
    const second = await turn(a, two, 'hello', 'shared-key')
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(JSON.stringify(await second.json())).toContain('for two')
    expect(mock.requests).toHaveLength(2)
  })

  it('holds across a restart and another instance, from Redis and from the log', async () => {
    const a = await instance()
    const id = await newSession(a)
    mock.enqueue({ text: 'remembered' })
    const first = await turn(a, id, 'remember this', 'k-restart')
    expect(first.status).toBe(200)
    const firstText = await first.text()
    await a.close()

    const b = await instance()
    const replayed = await turn(b, id, 'remember this', 'k-restart')
    expect(await replayed.text()).toBe(firstText)
    expect((await turn(b, id, 'something else', 'k-restart')).status).toBe(422)

    // Redis lost the record: the session's own log still knows the key and its request.
    const removed = await admin.del(
      `turnline:ns:${env.TURNLINE_REDIS_NAMESPACE}:idem:idem-tenant:${id}/k-restart`,
    )
    expect(removed).toBe(1)
    const c = await instance()
    expect(await (await turn(c, id, 'remember this', 'k-restart')).text()).toBe(firstText)
    expect((await turn(c, id, 'something else', 'k-restart')).status).toBe(422)
    expect(mock.requests).toHaveLength(1)
  })
})
