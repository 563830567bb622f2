import { describe, expect, it } from 'vitest'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { UpstashTenantLimiter } from '../../adapters/upstash/upstash-tenant-limiter.ts'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { ConfigError } from '../../functions/env-config.ts'
import type { UsageReport } from '../../src/contract/tenancy.ts'
import { SessionService } from '../../src/core/session-service.ts'

/** The tenancy configuration as createDeps builds it, and the single-tenant server unchanged. */
async function appOf(env: Record<string, string>) {
  const deps = await createDeps({ TURNLINE_STORE: 'memory', TURNLINE_LOG: 'off', ...env })
  const app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    ...deps.http,
    log: () => {},
  })
  return { deps, app }
}

describe('tenancy configuration', () => {
  it('a single-tenant server without limits answers as before: no RateLimit headers, no Redis', async () => {
    const { deps, app } = await appOf({})
    expect(deps.http.tenancy.limiter).toBeInstanceOf(MemoryTenantLimiter)
    for (let i = 0; i < 3; i++) {
      const res = await app.request('/v1/sessions')
      expect(res.status).toBe(200)
      expect([...res.headers.keys()].filter((name) => name.startsWith('ratelimit'))).toEqual([])
    }
    const usage = (await (await app.request('/v1/usage')).json()) as UsageReport
    expect(usage).toMatchObject({
      tenant: 'local',
      requests: { today: 3, per_minute: { limit: null, remaining: null } },
      concurrent_turns: { limit: null, used: 0, remaining: null },
      tokens: { limit: null, used: 0, remaining: null },
      cost_usd: { limit: null, used: 0, remaining: null },
    })
  })

  it('limits a single-tenant server too when TURNLINE_LIMIT_* are set', async () => {
    const { deps, app } = await appOf({ TURNLINE_LIMIT_REQUESTS_PER_MINUTE: '2' })
    expect(deps.notices.join('\n')).toMatch(/default limits per tenant: 2 requests\/min/)
    expect((await app.request('/v1/sessions')).status).toBe(200)
    expect((await app.request('/v1/sessions')).status).toBe(200)
    const refused = await app.request('/v1/sessions')
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    expect((await refused.json()) as object).toMatchObject({ error: { code: 'rate_limited' } })
  })

  it('counts in the coordinator’s Redis when several tenants or limits share it', async () => {
    const { deps } = await appOf({
      TURNLINE_API_KEYS: 'aaaaaaaaaaaaaaaaaaaa=t1',
      UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9',
      UPSTASH_REDIS_REST_TOKEN: 'token',
      TURNLINE_SANDBOX: 'require',
    })
    expect(deps.http.tenancy.limiter).toBeInstanceOf(UpstashTenantLimiter)
  })

  it('lets requests through when the counters cannot be reached (logged), as the library does', async () => {
    const deps = await createDeps({
      TURNLINE_STORE: 'memory',
      TURNLINE_LOG: 'off',
      TURNLINE_API_KEYS: 'aaaaaaaaaaaaaaaaaaaa=t1',
      TURNLINE_LIMIT_REQUESTS_PER_MINUTE: '1',
      // Nothing listens there: every call fails fast, within a short budget.
      UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:9',
      UPSTASH_REDIS_REST_TOKEN: 'token',
      TURNLINE_IO_BUDGET_MS: '300',
      TURNLINE_COORDINATOR_TIMEOUT_MS: '100',
    })
    const logs: Record<string, unknown>[] = []
    const app = createApp({
      api: new SessionService(deps.service),
      auth: deps.auth,
      ...deps.http,
      log: (entry) => logs.push(entry),
    })
    const headers = { authorization: 'Bearer aaaaaaaaaaaaaaaaaaaa' }
    for (let i = 0; i < 2; i++) {
      // A route that needs nothing else of the coordinator (a listing reads its activity index).
      const res = await app.request('/v1/workspaces', { headers })
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-limit')).toBeNull()
    }
    expect(logs).toContainEqual(
      expect.objectContaining({
        msg: 'request limit unavailable; request let through',
        tenant: 't1',
      }),
    )
    // Reading the usage needs the counters: that fails like any coordinator outage.
    expect((await app.request('/v1/usage', { headers })).status).toBe(503)
  })

  it('the key registry makes a server multi-tenant: no unauthenticated requests', async () => {
    const { deps, app } = await appOf({ TURNLINE_KEY_REGISTRY: '1', HOST: '0.0.0.0' })
    expect(deps.auth.registry).toBeDefined()
    expect((await app.request('/v1/sessions')).status).toBe(401)
  })

  it('refuses bad tenancy values, naming the variable', async () => {
    for (const [name, value] of [
      ['TURNLINE_LIMIT_COST_USD_PER_DAY', 'ten dollars'],
      ['TURNLINE_LIMIT_CONCURRENT_TURNS', '0'],
      ['TURNLINE_TURN_SLOT_TTL_MS', '10'],
      ['TURNLINE_KEY_RELOAD_SECONDS', '0'],
    ] as const) {
      const error = await createDeps({ TURNLINE_STORE: 'memory', [name]: value }).catch(
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(ConfigError)
      expect(String(error)).toContain(name)
    }
    // Plain Redis needs the entry's TCP limiter, like its coordinator.
    const error = await createDeps(
      {
        TURNLINE_STORE: 'memory',
        REDIS_URL: 'redis://127.0.0.1:9',
        TURNLINE_LIMIT_CONCURRENT_TURNS: '2',
      },
      { redisCoordinator: () => ({}) as never },
    ).catch((e: unknown) => e)
    expect(String(error)).toMatch(
      /REDIS_URL: this runtime has no TCP Redis client for the per-tenant limits/,
    )
  })
})
