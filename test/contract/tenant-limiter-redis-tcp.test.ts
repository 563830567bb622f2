import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisTcpTenantLimiter } from '../../adapters/redis-tcp/redis-tcp-tenant-limiter.ts'
import { UpstashTenantLimiter } from '../../adapters/upstash/upstash-tenant-limiter.ts'
import { utcDay } from '../../src/shared/utc-day.ts'
import { requireServices } from '../support/services.ts'
import { startUpstashProxy } from '../support/upstash-proxy.ts'
import { describeTenantLimiter } from './tenant-limiter.suite.ts'

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const runPrefix = `turnline-test-limit-tcp:${crypto.randomUUID().slice(0, 8)}:`
const WINDOW_MS = 1_000
let admin: IORedis
let namespaces = 0

beforeAll(() => {
  admin = new IORedis(requireServices().redisUrl)
})

afterAll(async () => {
  const keys = await admin.keys(`${runPrefix}*`)
  if (keys.length > 0) await admin.del(...keys)
  admin?.disconnect()
})

const freshNamespace = () => `${runPrefix}${namespaces++}:`

describeTenantLimiter('redis-tcp (ioredis → redis-server)', async () => {
  const limiter = new RedisTcpTenantLimiter({
    url: requireServices().redisUrl,
    namespace: freshNamespace(),
    windowMs: WINDOW_MS,
  })
  return {
    limiter,
    windowMs: WINDOW_MS,
    advance: sleep,
    now: () => Date.now(),
    cleanup: () => limiter.close(),
  }
})

describe('RedisTcpTenantLimiter specifics', () => {
  it('shares keys and meaning with the Upstash adapter (one Redis, either client)', async () => {
    const ns = freshNamespace()
    const tcp = new RedisTcpTenantLimiter({
      url: requireServices().redisUrl,
      namespace: ns,
      windowMs: WINDOW_MS,
    })
    const proxy = await startUpstashProxy({ redisUrl: requireServices().redisUrl })
    try {
      const rest = new UpstashTenantLimiter({
        url: proxy.url,
        token: proxy.token,
        namespace: ns,
        windowMs: WINDOW_MS,
      })
      // The burst must stay inside one window (real time): when a slow machine let the window
      // turn meanwhile, it runs again on another tenant instead of failing on the machine.
      let tenant = 'acme'
      for (let attempt = 1; ; attempt++) {
        const into = Date.now() % WINDOW_MS
        if (into > WINDOW_MS / 4) await sleep(WINDOW_MS - into + 5)
        const window = Math.floor(Date.now() / WINDOW_MS)
        tenant = attempt === 1 ? 'acme' : `acme-${attempt}`
        try {
          expect((await rest.hit(tenant, 3))?.allowed).toBe(true)
          expect((await tcp.hit(tenant, 3))?.allowed).toBe(true)
          expect(await rest.peekWindow(tenant, 3)).toMatchObject({ remaining: 1 })
          expect(await tcp.peekWindow(tenant, 3)).toMatchObject({ remaining: 1 })
          expect((await rest.hit(tenant, 3))?.allowed).toBe(true)
          expect((await tcp.hit(tenant, 3))?.allowed).toBe(false)
          break
        } catch (error) {
          if (attempt < 3 && Math.floor(Date.now() / WINDOW_MS) !== window) continue
          throw error
        }
      }

      expect((await tcp.acquireSlot(tenant, 's1', 1, 30_000)).status).toBe('acquired')
      expect((await rest.acquireSlot(tenant, 's2', 1, 30_000)).status).toBe('full')
      const slotsTtl = await admin.pttl(`${ns}slots:${tenant}`)
      expect(slotsTtl).toBeGreaterThan(0)
      expect(slotsTtl).toBeLessThanOrEqual(30_000)
      await rest.releaseSlot(tenant, 's1')
      expect(await tcp.activeSlots(tenant)).toBe(0)

      const limits = { ttlMs: 30_000, tokensPerDay: 100 }
      expect(
        await rest.reserve(tenant, { id: 'c1', tokens: 60, costMicroUsd: 3, ...limits }),
      ).toEqual({ status: 'held' })
      expect(
        await tcp.reserve(tenant, { id: 'c2', tokens: 60, costMicroUsd: 3, ...limits }),
      ).toEqual({ status: 'held' })
      expect(
        (await rest.reserve(tenant, { id: 'c3', tokens: 1, costMicroUsd: 0, ...limits })).status,
      ).toBe('refused')
      expect(await rest.settle(tenant, 'c1', { tokens: 10, costMicroUsd: 20 })).toBe(true)
      expect(await tcp.settle(tenant, 'c1', { tokens: 10, costMicroUsd: 20 })).toBe(false)
      expect(await tcp.settle(tenant, 'c2', { tokens: 5, costMicroUsd: 1 })).toBe(true)
      const expected = {
        day: utcDay(Date.now()),
        requests: 4,
        tokens: 15,
        costMicroUsd: 21,
        reservedTokens: 0,
        reservedCostMicroUsd: 0,
        outputBytes: 0,
      }
      expect(await tcp.usageToday(tenant)).toEqual(expected)
      expect(await rest.usageToday(tenant)).toEqual(expected)
      // Today's counters expire on their own (two days after the day began at the latest).
      const ttl = await admin.pttl(`${ns}usage:${tenant}:${expected.day}`)
      expect(ttl).toBeGreaterThan(86_400_000)
      expect(ttl).toBeLessThanOrEqual(2 * 86_400_000)
      // So do the settled ids and the holds.
      expect(await admin.pttl(`${ns}settled:${tenant}:c1`)).toBeGreaterThan(86_400_000)
      await rest.reserve(tenant, { id: 'c4', tokens: 1, costMicroUsd: 0, ttlMs: 30_000 })
      const holdsTtl = await admin.pttl(`${ns}holds:${tenant}`)
      expect(holdsTtl).toBeGreaterThan(0)
      expect(holdsTtl).toBeLessThanOrEqual(30_000)
    } finally {
      await proxy.close()
      await tcp.close()
    }
  })

  it('an unreadable counter is corrupt_data', async () => {
    const ns = freshNamespace()
    const tcp = new RedisTcpTenantLimiter({ url: requireServices().redisUrl, namespace: ns })
    try {
      await admin.hset(`${ns}usage:acme:${utcDay(Date.now())}`, 'tokens', 'many')
      await expect(tcp.usageToday('acme')).rejects.toMatchObject({ code: 'corrupt_data' })
    } finally {
      await tcp.close()
    }
  })
})
