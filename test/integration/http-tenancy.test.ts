import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import type { RedisTcpCoordinator } from '../../adapters/redis-tcp/redis-tcp-coordinator.ts'
import { RedisTcpTenantLimiter } from '../../adapters/redis-tcp/redis-tcp-tenant-limiter.ts'
import { redisKeyPrefix } from '../../adapters/shared/redis-namespace.ts'
import { UpstashTenantLimiter } from '../../adapters/upstash/upstash-tenant-limiter.ts'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { nodeBackends } from '../../functions/entries/node-backends.ts'
import {
  hashApiKey,
  KEY_REGISTRY_OBJECT,
  newApiKey,
  updateKeyRegistry,
} from '../../functions/tenancy/key-registry.ts'
import type { UsageReport } from '../../src/contract/tenancy.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { AppInstance } from '../support/app-instance.ts'
import { gate } from '../support/gate.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { requireServices } from '../support/services.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'
import type { UpstashProxy } from '../support/upstash-proxy.ts'

/**
 * Per-tenant limits and the key registry over real HTTP, configured like a deployment: keys in
 * TURNLINE_API_KEYS (plain and hashed) and in the registry on S3 (moto), limits counted in
 * redis-server through the Upstash REST proxy (@upstash/ratelimit), turns on the mock OpenAI.
 */
const services = requireServices()
const run = crypto.randomUUID().slice(0, 8)
const tenant = (name: string) => `${name}-${run}`
const PLAIN_KEY = `plain-key-${run}-0123456789`
const HASHED_KEY = `hashed-key-${run}-0123456789`
const SLOT_TTL_MS = 1_500
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

let deployment: TestDeployment
let proxy: UpstashProxy
let mock: MockOpenAI
let app: AppInstance

beforeAll(async () => {
  deployment = await startTestDeployment('tenancy', {
    TURNLINE_API_KEYS: `${PLAIN_KEY}=${tenant('plain')},${await hashApiKey(HASHED_KEY)}=${tenant('hashed')}`,
    TURNLINE_KEY_REGISTRY: '1',
    TURNLINE_KEY_RELOAD_SECONDS: '1',
    TURNLINE_LIMIT_REQUESTS_PER_MINUTE: '1000',
    TURNLINE_LIMIT_CONCURRENT_TURNS: '1',
    TURNLINE_TURN_SLOT_TTL_MS: String(SLOT_TTL_MS),
    TURNLINE_LOG: 'off',
  })
  ;({ proxy, mock, app } = deployment)
})
afterAll(() => deployment?.close())
beforeEach(() => {
  mock.reset()
  // Every model reply: 100 input + 50 output tokens; gpt-4o-mini prices that at $0.000045.
  mock.respond(() => ({ text: 'done', usage: { input_tokens: 100, output_tokens: 50 } }))
})

const store = () => app.deps.service.sessions.objects

/** A registry key for a fresh tenant, with these limits. */
async function registered(name: string, limits: Record<string, number | null> = {}) {
  const key = newApiKey()
  const hash = await hashApiKey(key)
  await updateKeyRegistry(store(), (registry) => ({
    ...registry,
    keys: [...registry.keys, { hash, tenant: tenant(name) }],
    tenants: { ...registry.tenants, [tenant(name)]: { limits } },
  }))
  // Servers re-read the registry for an unknown key at most once a second (here).
  await sleep(1_100)
  return key
}

function call(
  key: string,
  path: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
) {
  return fetch(`${app.url}${path}`, {
    ...init,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...init.headers,
    },
  })
}

async function newSession(key: string): Promise<string> {
  const res = await call(key, '/v1/sessions', { method: 'POST', body: '{}' })
  expect(res.status).toBe(201)
  return ((await res.json()) as { session_id: string }).session_id
}

const turn = (key: string, id: string) =>
  call(key, `/v1/sessions/${id}/turns`, { method: 'POST', body: JSON.stringify({ input: 'go' }) })

async function usage(key: string): Promise<UsageReport> {
  const res = await call(key, '/v1/usage')
  expect(res.status).toBe(200)
  return (await res.json()) as UsageReport
}

/** Not within the last seconds of a minute, so a burst stays inside one window. */
async function earlyInMinute(): Promise<void> {
  const into = Date.now() % 60_000
  if (into > 50_000) await sleep(60_000 - into + 50)
}

describe('per-tenant limits over HTTP (Upstash)', () => {
  it('answers the request past the per-minute limit with 429, Retry-After and RateLimit headers', async () => {
    const key = await registered('rpm', { requests_per_minute: 5 })
    await earlyInMinute()
    for (let i = 0; i < 5; i++) {
      const res = await call(key, '/v1/sessions')
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-limit')).toBe('5')
      expect(res.headers.get('ratelimit-remaining')).toBe(String(4 - i))
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1)
    }
    const refused = await call(key, '/v1/sessions')
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({
      error: { code: 'rate_limited', details: { limit: 5, window_seconds: 60 } },
    })
    const retryAfter = Number(refused.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(refused.headers.get('ratelimit-limit')).toBe('5')
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    // Another tenant has its own window, with the deployment default.
    const other = await call(PLAIN_KEY, '/v1/sessions')
    expect(other.status).toBe(200)
    expect(other.headers.get('ratelimit-limit')).toBe('1000')
    // Every request of the day is counted, the refused one too; reading the usage is not
    // counted, nor refused.
    const read = await call(key, '/v1/usage')
    expect(read.status).toBe(200)
    expect(read.headers.get('ratelimit-remaining')).toBe('0')
    expect(((await read.json()) as UsageReport).requests).toMatchObject({
      today: 6,
      per_minute: { limit: 5, used: 5, remaining: 0 },
    })
  })

  it('holds one turn slot per running turn, renews it, and releases it when the turn ends', async () => {
    const key = await registered('slots')
    const [first, second] = [await newSession(key), await newSession(key)]
    // A model reply held past the slot's lease (real time: the slot's TTL in redis-server),
    // until the test has seen the refusal: the renewal keeps the slot held.
    const reply = gate()
    onTestFinished(reply.open)
    mock.respond(() => ({
      text: 'slow',
      usage: { input_tokens: 1, output_tokens: 1 },
      hold: reply.promise,
    }))
    const running = turn(key, first)
    await until('the model call of the first turn', () =>
      mock.requests.length > 0 ? true : undefined,
    )
    await sleep(SLOT_TTL_MS + 500)
    const refused = await turn(key, second)
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({
      error: { code: 'too_many_concurrent_turns', details: { limit: 1, active: 1 } },
    })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect((await usage(key)).concurrent_turns).toEqual({ limit: 1, used: 1, remaining: 0 })
    reply.open()
    expect((await running).status).toBe(200)
    // Released at the end of the turn, not at the lease's end.
    mock.respond(() => ({ text: 'fast', usage: { input_tokens: 1, output_tokens: 1 } }))
    expect((await turn(key, second)).status).toBe(200)
    expect((await usage(key)).concurrent_turns).toEqual({ limit: 1, used: 0, remaining: 1 })
  })

  it('a slot left by a crashed instance lapses at its lease', async () => {
    const key = await registered('crash')
    const id = await newSession(key)
    // What a crashed instance leaves behind: a slot taken and never released nor renewed.
    const crashed = new UpstashTenantLimiter({
      url: proxy.url,
      token: proxy.token,
      namespace: redisKeyPrefix(deployment.env().TURNLINE_REDIS_NAMESPACE),
    })
    await crashed.acquireSlot(tenant('crash'), 'slot-of-a-dead-instance', 1, SLOT_TTL_MS)
    const refused = await turn(key, id)
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({ error: { code: 'too_many_concurrent_turns' } })
    await sleep(SLOT_TTL_MS + 100)
    expect((await turn(key, id)).status).toBe(200)
  })

  it('refuses the next turn once the daily tokens are used up; usage matches', async () => {
    const key = await registered('tokens', { tokens_per_day: 250 })
    const id = await newSession(key)
    expect((await turn(key, id)).status).toBe(200)
    // 150 of 250 used: the next turn may start, and is charged in full.
    expect((await turn(key, id)).status).toBe(200)
    const untilMidnight = () => Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000)
    // The server's figure lies between the seconds left before the request and after its answer.
    const atMost = untilMidnight()
    const refused = await turn(key, id)
    const atLeast = untilMidnight()
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({
      error: { code: 'quota_exceeded', details: { quota: 'tokens', limit: 250, used: 300 } },
    })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(atLeast)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(atMost)
    // Ending the session is never refused.
    expect((await call(key, `/v1/sessions/${id}/complete`, { method: 'POST' })).status).toBe(200)

    const report = await usage(key)
    expect(report).toMatchObject({
      tenant: tenant('tokens'),
      day: new Date().toISOString().slice(0, 10),
      tokens: { limit: 250, used: 300, reserved: 0, remaining: 0 },
      cost_usd: { limit: null, remaining: null },
      concurrent_turns: { limit: 1, used: 0, remaining: 1 },
      requests: { today: 5, per_minute: { limit: 1000 } },
    })
    expect(report.cost_usd.used).toBeCloseTo(0.00009, 9)
    expect(report.resets_at).toBe(
      new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000).toISOString(),
    )
  })

  it("charges a compaction's summary call to the day's tokens and cost", async () => {
    const key = await registered('compaction', { tokens_per_day: 10_000 })
    const id = await newSession(key)
    for (let i = 0; i < 3; i++) expect((await turn(key, id)).status).toBe(200)
    expect((await usage(key)).tokens.used).toBe(450)
    const compact = await call(key, `/v1/sessions/${id}/compact`, {
      method: 'POST',
      body: '{}',
      headers: { 'idempotency-key': `compact-${run}` },
    })
    expect(compact.status).toBe(200)
    expect(mock.requests.length).toBe(4)
    const report = await usage(key)
    expect(report.tokens.used).toBe(600)
    expect(report.cost_usd.used).toBeCloseTo(0.00018, 9)
  })

  it('refuses the next turn once the daily cost is used up', async () => {
    const key = await registered('cost', { cost_usd_per_day: 0.00005, tokens_per_day: null })
    const id = await newSession(key)
    expect((await turn(key, id)).status).toBe(200)
    expect((await turn(key, id)).status).toBe(200)
    const refused = await turn(key, id)
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({
      error: { code: 'quota_exceeded', details: { quota: 'cost_usd', limit: 0.00005 } },
    })
    expect((await usage(key)).cost_usd).toEqual({
      limit: 0.00005,
      used: 0.00009,
      reserved: 0,
      remaining: 0,
    })
  })
})

describe('keys over HTTP', () => {
  it('accepts plain and hashed keys from TURNLINE_API_KEYS', async () => {
    expect((await usage(PLAIN_KEY)).tenant).toBe(tenant('plain'))
    expect((await usage(HASHED_KEY)).tenant).toBe(tenant('hashed'))
    expect((await call(await hashApiKey(HASHED_KEY), '/v1/usage')).status).toBe(401)
  })

  it('a registry key works without restart; a revoked one stops within the interval', async () => {
    const key = newApiKey()
    expect((await call(key, '/v1/usage')).status).toBe(401)
    const hash = await hashApiKey(key)
    await updateKeyRegistry(store(), (registry) => ({
      ...registry,
      keys: [...registry.keys, { hash, tenant: tenant('added') }],
    }))
    // An unknown key re-reads the registry at most once a second here.
    await sleep(1_100)
    expect((await usage(key)).tenant).toBe(tenant('added'))
    const stored = await store().get(KEY_REGISTRY_OBJECT)
    const text = new TextDecoder().decode(stored?.body)
    expect(text).toContain(hash)
    expect(text).not.toContain(key)

    await updateKeyRegistry(store(), (registry) => ({
      ...registry,
      keys: registry.keys.filter((k) => k.hash !== hash),
    }))
    await sleep(1_100)
    expect((await call(key, '/v1/usage')).status).toBe(401)
  })
})

describe('per-tenant limits over HTTP (plain Redis over TCP)', () => {
  it('answers 429 past the limit, counting in redis-server through the TCP limiter', async () => {
    const key = `tcp-key-${run}-0123456789`
    const deps = await createDeps(
      {
        TURNLINE_STORE: 'memory',
        TURNLINE_LOG: 'off',
        REDIS_URL: services.redisUrl,
        TURNLINE_API_KEYS: `${key}=${tenant('tcp')}`,
        TURNLINE_LIMIT_REQUESTS_PER_MINUTE: '2',
      },
      nodeBackends,
    )
    expect(deps.http.tenancy.limiter).toBeInstanceOf(RedisTcpTenantLimiter)
    const tcpApp = createApp({
      api: new SessionService(deps.service),
      auth: deps.auth,
      ...deps.http,
      log: () => {},
    })
    const headers = { authorization: `Bearer ${key}` }
    try {
      await earlyInMinute()
      expect((await tcpApp.request('/v1/sessions', { headers })).status).toBe(200)
      expect((await tcpApp.request('/v1/sessions', { headers })).status).toBe(200)
      const refused = await tcpApp.request('/v1/sessions', { headers })
      expect(refused.status).toBe(429)
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
      const report = (await (await tcpApp.request('/v1/usage', { headers })).json()) as UsageReport
      expect(report.requests).toMatchObject({ today: 3, per_minute: { limit: 2, remaining: 0 } })
    } finally {
      await (deps.http.tenancy.limiter as RedisTcpTenantLimiter).close()
      await (deps.service.coordinator as RedisTcpCoordinator).close()
    }
  })
})
