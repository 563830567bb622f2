import { describe, expect, it } from 'vitest'
import type { TenantLimiter } from '../../src/ports/tenant-limiter.ts'
import { stampedLeaseId } from '../../src/shared/held-retry-after.ts'
import { utcDay } from '../../src/shared/utc-day.ts'

/**
 * The TenantLimiter contract, run over every adapter (memory with a manual clock, Upstash REST
 * through the proxy to redis-server, plain Redis over TCP, both on real time).
 */
export interface LimiterHarness {
  limiter: TenantLimiter
  /** The adapter's request window. */
  windowMs: number
  /** Lets time pass (a manual clock, or real sleep). */
  advance: (ms: number) => Promise<void>
  /** The adapter's notion of now. */
  now: () => number
  cleanup: () => Promise<void>
}

let tenants = 0
const freshTenant = () => `tenant-${process.pid}-${Date.now()}-${tenants++}`

/**
 * Lifetimes of the slots and holds that lapse in these tests. On the Redis adapters they are
 * real time: long enough that a loaded machine's pause between two calls cannot outlast the
 * margins the checks leave (a quarter of it).
 */
const SHORT_TTL_MS = 2_000

/** Waits until a window has just begun, so a burst stays inside one fixed window. */
async function windowStart(h: LimiterHarness): Promise<void> {
  const into = h.now() % h.windowMs
  if (into > 20) await h.advance(h.windowMs - into + 5)
}

/**
 * Runs a burst on a fresh tenant from the start of a window, and answers the tenant. The burst
 * must stay inside that window (real time on the Redis adapters): when a slow machine let the
 * window turn meanwhile, its verdicts prove nothing, so it runs again on another tenant (up to
 * three times) instead of failing on the machine's speed.
 */
async function burstInOneWindow(
  h: LimiterHarness,
  burst: (tenant: string) => Promise<void>,
  inTime: (startedAt: number) => boolean = (startedAt) =>
    Math.floor(h.now() / h.windowMs) === Math.floor(startedAt / h.windowMs),
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    await windowStart(h)
    const startedAt = h.now()
    const tenant = freshTenant()
    try {
      await burst(tenant)
      return tenant
    } catch (error) {
      if (attempt < 3 && !inTime(startedAt)) continue
      throw error
    }
  }
}

export function describeTenantLimiter(name: string, make: () => Promise<LimiterHarness>): void {
  describe(`TenantLimiter contract: ${name}`, () => {
    async function withLimiter(run: (h: LimiterHarness) => Promise<void>): Promise<void> {
      const h = await make()
      try {
        await run(h)
      } finally {
        await h.cleanup()
      }
    }

    it('counts every request for today, without a window when there is no limit', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        expect(await h.limiter.hit(tenant, undefined)).toBeUndefined()
        expect(await h.limiter.hit(tenant, undefined)).toBeUndefined()
        expect(await h.limiter.usageToday(tenant)).toEqual({
          day: utcDay(h.now()),
          requests: 2,
          tokens: 0,
          costMicroUsd: 0,
          reservedTokens: 0,
          reservedCostMicroUsd: 0,
          outputBytes: 0,
        })
        expect((await h.limiter.usageToday(freshTenant())).requests).toBe(0)
      }))

    it('admits `limit` requests per window, refuses the next, and admits again later', () =>
      withLimiter(async (h) => {
        const tenant = await burstInOneWindow(h, async (tenant) => {
          const other = freshTenant()
          const verdicts = []
          for (let i = 0; i < 4; i++) verdicts.push(await h.limiter.hit(tenant, 3))
          expect(verdicts.map((v) => v?.allowed)).toEqual([true, true, true, false])
          expect(verdicts.map((v) => v?.remaining)).toEqual([2, 1, 0, 0])
          const refused = verdicts[3]
          expect(refused?.limit).toBe(3)
          expect(refused?.resetAtMs).toBeGreaterThan(h.now())
          expect(refused?.resetAtMs).toBeLessThanOrEqual(h.now() + h.windowMs)
          // Reading the window does not count; another tenant has its own window.
          expect(await h.limiter.peekWindow(tenant, 3)).toMatchObject({
            allowed: false,
            remaining: 0,
          })
          expect((await h.limiter.hit(other, 3))?.allowed).toBe(true)
          // Every request presented is counted for the day, refused ones too.
          expect((await h.limiter.usageToday(tenant)).requests).toBe(4)
          // A higher limit takes effect at once on the same counts.
          expect(await h.limiter.hit(tenant, 5)).toMatchObject({ allowed: true, remaining: 1 })
        })
        // Two windows later the old requests no longer weigh.
        await h.advance(2 * h.windowMs)
        expect(await h.limiter.peekWindow(tenant, 3)).toMatchObject({ allowed: true, remaining: 3 })
        expect((await h.limiter.hit(tenant, 3))?.allowed).toBe(true)
      }))

    it('weighs the previous window into the sliding window', () =>
      withLimiter(async (h) => {
        // The four fill one window and the last two land in the first quarter of the next
        // (else the burst runs again: see burstInOneWindow).
        const inTime = (startedAt: number) =>
          Math.floor(h.now() / h.windowMs) === Math.floor(startedAt / h.windowMs) + 1 &&
          h.now() % h.windowMs < h.windowMs / 4
        await burstInOneWindow(
          h,
          async (tenant) => {
            for (let i = 0; i < 4; i++) {
              expect((await h.limiter.hit(tenant, 4))?.allowed).toBe(true)
            }
            // Just after the window turns, nearly all of the previous one still counts
            // (floor(0.99 × 4) = 3): one more request fits, the next does not.
            await h.advance(h.windowMs - (h.now() % h.windowMs) + 5)
            expect((await h.limiter.hit(tenant, 4))?.allowed).toBe(true)
            expect((await h.limiter.hit(tenant, 4))?.allowed).toBe(false)
          },
          inTime,
        )
      }))

    it('tells a full tenant when a slot is likely free: soon for a young turn, at the lapse for a silent one', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const ttl = 60_000
        await h.limiter.acquireSlot(tenant, stampedLeaseId(h.now(), 'young'), 1, ttl)
        // Not the minute the slot has left: its turn renews it and has just begun.
        expect(await h.limiter.acquireSlot(tenant, 'next', 1, ttl)).toEqual({
          status: 'full',
          active: 1,
          retryAfterMs: 1000,
        })
        // Far less left than a renewed slot keeps: its turn stopped renewing it; wait it out.
        const other = freshTenant()
        await h.limiter.acquireSlot(other, stampedLeaseId(h.now(), 'silent'), 1, 5000)
        const lapsing = await h.limiter.acquireSlot(other, 'next', 1, ttl)
        if (lapsing.status !== 'full') throw new Error('expected full')
        expect(lapsing.retryAfterMs).toBeGreaterThan(0)
        expect(lapsing.retryAfterMs).toBeLessThanOrEqual(5000)
      }))

    it('holds at most `limit` turn slots; a release frees one', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        // Slots that outlast any pause between these calls: only the release frees one here.
        const ttl = 60_000
        expect(await h.limiter.acquireSlot(tenant, 'a', 2, ttl)).toEqual({
          status: 'acquired',
          active: 1,
        })
        expect(await h.limiter.acquireSlot(tenant, 'b', 2, ttl)).toEqual({
          status: 'acquired',
          active: 2,
        })
        // A resend of an acquired slot is still acquired and counts once.
        expect(await h.limiter.acquireSlot(tenant, 'b', 2, ttl)).toEqual({
          status: 'acquired',
          active: 2,
        })
        const full = await h.limiter.acquireSlot(tenant, 'c', 2, ttl)
        expect(full.status).toBe('full')
        if (full.status !== 'full') throw new Error('expected full')
        expect(full.active).toBe(2)
        expect(full.retryAfterMs).toBeGreaterThan(0)
        expect(full.retryAfterMs).toBeLessThanOrEqual(ttl)
        expect(await h.limiter.activeSlots(tenant)).toBe(2)
        expect(await h.limiter.activeSlots(freshTenant())).toBe(0)

        await h.limiter.releaseSlot(tenant, 'a')
        expect(await h.limiter.renewSlot(tenant, 'a', ttl)).toBe(false)
        expect((await h.limiter.acquireSlot(tenant, 'c', 2, ttl)).status).toBe('acquired')
      }))

    it("counts followed streams' slots apart from turn slots, each with its own limit", () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const ttl = 60_000
        expect((await h.limiter.acquireSlot(tenant, 'turn', 1, ttl)).status).toBe('acquired')
        // A full turn pool leaves the follows pool alone, and the other way round.
        expect((await h.limiter.acquireSlot(tenant, 's1', 1, ttl, 'follows')).status).toBe(
          'acquired',
        )
        expect((await h.limiter.acquireSlot(tenant, 's2', 1, ttl, 'follows')).status).toBe('full')
        expect((await h.limiter.acquireSlot(tenant, 'turn2', 1, ttl)).status).toBe('full')
        expect(await h.limiter.activeSlots(tenant)).toBe(1)
        expect(await h.limiter.activeSlots(tenant, 'follows')).toBe(1)
        // A release in one pool frees nothing in the other.
        await h.limiter.releaseSlot(tenant, 's1')
        expect(await h.limiter.activeSlots(tenant, 'follows')).toBe(1)
        await h.limiter.releaseSlot(tenant, 's1', 'follows')
        expect(await h.limiter.activeSlots(tenant, 'follows')).toBe(0)
        expect(await h.limiter.activeSlots(tenant)).toBe(1)
      }))

    it('lets a renewed slot outlive its first deadline and a slot nobody renews lapse', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const ttl = SHORT_TTL_MS
        expect((await h.limiter.acquireSlot(tenant, 'b', 2, ttl)).status).toBe('acquired')
        expect((await h.limiter.acquireSlot(tenant, 'c', 2, ttl)).status).toBe('acquired')
        await h.advance(ttl / 2)
        expect(await h.limiter.renewSlot(tenant, 'c', ttl)).toBe(true)
        await h.advance(ttl * 0.75)
        expect(await h.limiter.activeSlots(tenant)).toBe(1)
        expect((await h.limiter.acquireSlot(tenant, 'd', 2, ttl)).status).toBe('acquired')
        await h.advance(ttl + 50)
        expect(await h.limiter.activeSlots(tenant)).toBe(0)
        expect(await h.limiter.renewSlot(tenant, 'c', ttl)).toBe(false)
      }))

    it("settles calls into today's tokens and cost, each call id once", () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        expect(
          await h.limiter.settle(tenant, 's/turn-1/1', { tokens: 1200, costMicroUsd: 3500 }),
        ).toBe(true)
        expect(await h.limiter.settle(tenant, 's/turn-1/2', { tokens: 30, costMicroUsd: 0 })).toBe(
          true,
        )
        // A retried settle (a resend, or the same step run again) counts nothing.
        expect(
          await h.limiter.settle(tenant, 's/turn-1/1', { tokens: 1200, costMicroUsd: 3500 }),
        ).toBe(false)
        await h.limiter.hit(tenant, undefined)
        expect(await h.limiter.usageToday(tenant)).toEqual({
          day: utcDay(h.now()),
          requests: 1,
          tokens: 1230,
          costMicroUsd: 3500,
          reservedTokens: 0,
          reservedCostMicroUsd: 0,
          outputBytes: 0,
        })
      }))

    it('holds a reservation while usage and holds are below the limit, and refuses after', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const limits = { tokensPerDay: 100, costMicroUsdPerDay: 1_000 }
        const hold = (id: string, tokens: number, costMicroUsd = 0) =>
          h.limiter.reserve(tenant, { id, tokens, costMicroUsd, ttlMs: 60_000, ...limits })
        expect(await hold('a', 60, 10)).toEqual({ status: 'held' })
        // 60 of 100 held: the next call may start, and take the day past the limit.
        expect(await hold('b', 60, 10)).toEqual({ status: 'held' })
        // A resend of a held call is held once.
        expect(await hold('b', 60, 10)).toEqual({ status: 'held' })
        expect(await h.limiter.usageToday(tenant)).toMatchObject({
          tokens: 0,
          reservedTokens: 120,
          reservedCostMicroUsd: 20,
        })
        expect(await hold('c', 1)).toEqual({
          status: 'refused',
          quota: 'tokens',
          used: 0,
          reserved: 120,
        })
        // Settling replaces a hold by the usage; releasing drops it.
        expect(await h.limiter.settle(tenant, 'a', { tokens: 30, costMicroUsd: 5 })).toBe(true)
        await h.limiter.release(tenant, 'b')
        expect(await h.limiter.usageToday(tenant)).toMatchObject({
          tokens: 30,
          costMicroUsd: 5,
          reservedTokens: 0,
          reservedCostMicroUsd: 0,
        })
        // A settled call asked again (the same step re-run after a crash) holds nothing more.
        expect(await hold('a', 60)).toEqual({ status: 'settled' })
        expect(await hold('c', 80, 999)).toEqual({ status: 'held' })
        expect(await hold('d', 1)).toEqual({
          status: 'refused',
          quota: 'tokens',
          used: 30,
          reserved: 80,
        })
        await h.limiter.release(tenant, 'c')
        // The cost limit is checked the same way (micro-USD).
        expect(await hold('e', 1, 995)).toEqual({ status: 'held' })
        expect(await hold('f', 1, 1)).toEqual({
          status: 'refused',
          quota: 'cost',
          used: 5,
          reserved: 995,
        })
        // Without limits every call is held.
        expect(
          await h.limiter.reserve(freshTenant(), {
            id: 'x',
            tokens: 10 ** 9,
            costMicroUsd: 0,
            ttlMs: 1,
          }),
        ).toEqual({ status: 'held' })
      }))

    it('lets a hold nobody settles lapse at its deadline', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const reserve = (id: string) =>
          h.limiter.reserve(tenant, {
            id,
            tokens: 50,
            costMicroUsd: 0,
            ttlMs: SHORT_TTL_MS,
            tokensPerDay: 50,
          })
        expect(await reserve('crashed')).toEqual({ status: 'held' })
        expect((await reserve('next')).status).toBe('refused')
        await h.advance(SHORT_TTL_MS + 50)
        expect((await h.limiter.usageToday(tenant)).reservedTokens).toBe(0)
        expect(await reserve('next')).toEqual({ status: 'held' })
        // A call that outlived its hold is still charged when it settles.
        expect(await h.limiter.settle(tenant, 'crashed', { tokens: 7, costMicroUsd: 0 })).toBe(true)
        expect((await h.limiter.usageToday(tenant)).tokens).toBe(7)
      }))

    it('holds at most what fits when 50 calls reserve at once', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const verdicts = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            h.limiter.reserve(tenant, {
              id: `call-${i}`,
              tokens: 30,
              costMicroUsd: 0,
              ttlMs: 60_000,
              tokensPerDay: 100,
            }),
          ),
        )
        // 0, 30, 60 and 90 held are below 100: four calls hold, the other 46 are refused.
        expect(verdicts.filter((v) => v.status === 'held')).toHaveLength(4)
        expect((await h.limiter.usageToday(tenant)).reservedTokens).toBe(120)
      }))

    it('counts kept output bytes within the daily limit, and takes back what was returned', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        expect(await h.limiter.keepOutput(tenant, 600, undefined)).toEqual({ status: 'counted' })
        expect(await h.limiter.keepOutput(tenant, 400, 1000)).toEqual({ status: 'counted' })
        expect(await h.limiter.keepOutput(tenant, 1, 1000)).toEqual({
          status: 'refused',
          used: 1000,
        })
        expect((await h.limiter.usageToday(tenant)).outputBytes).toBe(1000)
        await h.limiter.returnOutput(tenant, 300)
        expect(await h.limiter.keepOutput(tenant, 300, 1000)).toEqual({ status: 'counted' })
        // never below nothing
        await h.limiter.returnOutput(tenant, 5000)
        expect((await h.limiter.usageToday(tenant)).outputBytes).toBe(0)
        expect((await h.limiter.usageToday(freshTenant())).outputBytes).toBe(0)
      }))

    it('counts at most what fits when 50 outputs are kept at once', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const verdicts = await Promise.all(
          Array.from({ length: 50 }, () => h.limiter.keepOutput(tenant, 30, 100)),
        )
        expect(verdicts.filter((v) => v.status === 'counted')).toHaveLength(3)
        expect((await h.limiter.usageToday(tenant)).outputBytes).toBe(90)
      }))
  })
}
