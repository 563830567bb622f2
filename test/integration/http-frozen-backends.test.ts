import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type AppInstance, deploymentEnv, startAppInstance } from '../support/app-instance.ts'
import { type FreezableProxy, startFreezableProxy } from '../support/freezable-proxy.ts'
import { gate } from '../support/gate.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'
import { until } from '../support/until.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'

/**
 * A frozen store or coordinator (a real proxy in front of moto_server / the Upstash proxy that
 * stops answering) ends requests in bounded time with 503 and Retry-After, names no storage key,
 * and leaves the session usable once the backend answers again. Deadlines are scaled down
 * through the environment: 1 s per attempt, 2.5 s per call, a 6 s lease.
 */
const services = requireServices()
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let upstash: UpstashProxy
let s3Proxy: FreezableProxy
let redisProxy: FreezableProxy
let mock: MockOpenAI
let app: AppInstance

beforeAll(async () => {
  bucket = await createTestBucket(services.s3, 'frozen')
  upstash = await startUpstashProxy({ redisUrl: services.redisUrl })
  s3Proxy = await startFreezableProxy(services.s3.endpoint)
  redisProxy = await startFreezableProxy(upstash.url)
  mock = await startMockOpenAI()
  app = await startAppInstance(
    deploymentEnv({
      s3: { ...services.s3, endpoint: s3Proxy.url },
      bucket: bucket.bucket,
      upstash: { url: redisProxy.url, token: upstash.token },
      modelBaseURL: mock.baseURL,
      extra: {
        TURNLINE_STORAGE_TIMEOUT_MS: '1000',
        TURNLINE_COORDINATOR_TIMEOUT_MS: '1000',
        TURNLINE_IO_BUDGET_MS: '2500',
        TURNLINE_LEASE_MS: '6000',
      },
    }),
  )
})
afterAll(async () => {
  await app?.close()
  await mock?.close()
  await s3Proxy?.close()
  await redisProxy?.close()
  await upstash?.close()
  await bucket?.destroy()
})
beforeEach(() => {
  mock.reset()
  s3Proxy.thaw()
  redisProxy.thaw()
})

/** Never waits longer than 20 s: a hung request fails the test instead of stalling it. */
const post = (path: string, body: unknown) =>
  fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  })
const get = (path: string) => fetch(`${app.url}${path}`, { signal: AbortSignal.timeout(20_000) })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function newSession(): Promise<string> {
  const res = await post('/v1/sessions', {})
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

/**
 * The turn, retried while the session is busy as a client would (after Retry-After): a request
 * abandoned at its deadline may still land when the backend answers again — e.g. take the
 * lease — which then lapses after TURNLINE_LEASE_MS.
 */
async function turnWhenFree(id: string, input: string): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await post(`/v1/sessions/${id}/turns`, { input })
    if (res.status !== 409 || attempt === 8) return res
    await sleep(Number(res.headers.get('retry-after') ?? '1') * 1000)
  }
}

async function expect503(res: Response, code: string, started: number) {
  const text = await res.text()
  expect(res.status, text).toBe(503)
  expect(JSON.parse(text)).toMatchObject({ error: { code } })
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  expect(text).not.toMatch(/\.vtcode|\.turnline|\/log\//)
  expect(Date.now() - started).toBeLessThan(10_000)
}

describe('frozen backends', () => {
  it('a store that freezes mid-turn ends the turn 503; the session works once it answers', async () => {
    const id = await newSession()
    const reply = gate()
    mock.enqueue({ text: 'answered while the store froze', hold: reply.promise })
    const started = Date.now()
    const turn = post(`/v1/sessions/${id}/turns`, { input: 'go' })
    // The turn holds its lease and waits for the model: the store freezes, then it answers.
    await until('the model request', () => (mock.requests.length === 1 ? true : undefined))
    s3Proxy.freeze()
    reply.open()
    await expect503(await turn, 'storage_unavailable', started)

    s3Proxy.thaw()
    mock.enqueue({ text: 'back again' })
    const next = await turnWhenFree(id, 'again')
    expect(next.status).toBe(200)
    expect(await next.json()).toMatchObject({ status: 'completed' })
  })

  it('reads of a frozen store end 503 too', async () => {
    const id = await newSession()
    s3Proxy.freeze()
    const started = Date.now()
    await expect503(await get(`/v1/sessions/${id}/events?after=-1`), 'storage_unavailable', started)
  })

  it('a frozen coordinator ends the turn 503 before anything runs', async () => {
    const id = await newSession()
    redisProxy.freeze()
    const started = Date.now()
    await expect503(
      await post(`/v1/sessions/${id}/turns`, { input: 'go' }),
      'coordinator_unavailable',
      started,
    )
    expect(mock.requests).toHaveLength(0)
    redisProxy.thaw()
    mock.enqueue({ text: 'ok now' })
    expect((await turnWhenFree(id, 'go')).status).toBe(200)
  })
})
