import { describe, expect, it } from 'vitest'
import { type TenantLimiter, utcDay } from '../../src/ports/tenant-limiter.ts'

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

/** Waits until a window has just begun, so a burst stays inside one fixed window. */
async function windowStart(h: LimiterHarness): Promise<void> {
  const into = h.now() % h.windowMs
  if (into > 20) await h.advance(h.windowMs - into + 5)
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
        })
        expect((await h.limiter.usageToday(freshTenant())).requests).toBe(0)
      }))

    it('admits `limit` requests per window, refuses the next, and admits again later', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const other = freshTenant()
        await windowStart(h)
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
        // Two windows later the old requests no longer weigh.
        await h.advance(2 * h.windowMs)
        expect(await h.limiter.peekWindow(tenant, 3)).toMatchObject({ allowed: true, remaining: 3 })
        expect((await h.limiter.hit(tenant, 3))?.allowed).toBe(true)
      }))

    it('weighs the previous window into the sliding window', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        await windowStart(h)
        for (let i = 0; i < 4; i++) expect((await h.limiter.hit(tenant, 4))?.allowed).toBe(true)
        // Just after the window turns, nearly all of the previous one still counts
        // (floor(0.99 × 4) = 3): one more request fits, the next does not.
        await h.advance(h.windowMs - (h.now() % h.windowMs) + 5)
        expect((await h.limiter.hit(tenant, 4))?.allowed).toBe(true)
        expect((await h.limiter.hit(tenant, 4))?.allowed).toBe(false)
      }))

    it('holds at most `limit` turn slots; a release or a lapse frees one', () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        const ttl = 400
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

        // A renewed slot outlives its first deadline; a slot nobody renews lapses.
        await h.advance(ttl / 2)
        expect(await h.limiter.renewSlot(tenant, 'c', ttl)).toBe(true)
        await h.advance(ttl * 0.75)
        expect(await h.limiter.activeSlots(tenant)).toBe(1)
        expect((await h.limiter.acquireSlot(tenant, 'd', 2, ttl)).status).toBe('acquired')
        await h.advance(ttl + 50)
        expect(await h.limiter.activeSlots(tenant)).toBe(0)
        expect(await h.limiter.renewSlot(tenant, 'c', ttl)).toBe(false)
      }))

    it("adds charges to today's tokens and cost", () =>
      withLimiter(async (h) => {
        const tenant = freshTenant()
        await h.limiter.charge(tenant, { tokens: 1200, costMicroUsd: 3500 })
        await h.limiter.charge(tenant, { tokens: 30, costMicroUsd: 0 })
        await h.limiter.hit(tenant, undefined)
        expect(await h.limiter.usageToday(tenant)).toEqual({
          day: utcDay(h.now()),
          requests: 1,
          tokens: 1230,
          costMicroUsd: 3500,
        })
      }))
  })
}
