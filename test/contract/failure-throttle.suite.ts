import { describe, expect, it } from 'vitest'
import type { FailureThrottle, ThrottleRule } from '../../src/ports/failure-throttle.ts'

/**
 * The FailureThrottle contract, run over every adapter (memory, Upstash REST through the proxy
 * to redis-server, plain Redis over TCP), each on a manual clock: the Redis script takes its
 * instant from the caller, so no test waits for real time to pass.
 */
export interface ThrottleHarness {
  throttle: FailureThrottle
  /** Another instance on the same shared state (a second process; memory: the same one). */
  sibling: FailureThrottle
  /** Moves the clock of both on. */
  advance: (ms: number) => void
  cleanup: () => Promise<void>
}

const RULE: ThrottleRule = { capacity: 3, refillMs: 1_000 }
let buckets = 0
const freshBucket = () => `a:${process.pid}-${Date.now()}-${buckets++}`

export function describeFailureThrottle(name: string, make: () => Promise<ThrottleHarness>): void {
  describe(`FailureThrottle contract: ${name}`, () => {
    async function withThrottle(run: (h: ThrottleHarness) => Promise<void>): Promise<void> {
      const h = await make()
      try {
        await run(h)
      } finally {
        await h.cleanup()
      }
    }
    const one = async (throttle: FailureThrottle, bucket: string) => {
      const [verdict] = await throttle.fail([{ id: bucket, rule: RULE }])
      if (!verdict) throw new Error('no verdict')
      return verdict
    }

    it('counts `capacity` failures, then refuses with the time until the next token', () =>
      withThrottle(async (h) => {
        const bucket = freshBucket()
        const verdicts = []
        for (let i = 0; i < 5; i++) verdicts.push(await one(h.throttle, bucket))
        expect(verdicts.map((v) => [v.counted, v.remaining])).toEqual([
          [true, 2],
          [true, 1],
          [true, 0],
          [false, 0],
          [false, 0],
        ])
        expect(verdicts.map((v) => v.retryAfterMs)).toEqual([0, 0, 1_000, 1_000, 1_000])
        h.advance(400)
        expect(await one(h.throttle, bucket)).toMatchObject({ counted: false, retryAfterMs: 600 })
      }))

    it('gains one token per refill interval, never more than its capacity', () =>
      withThrottle(async (h) => {
        const bucket = freshBucket()
        for (let i = 0; i < 3; i++) await one(h.throttle, bucket)
        h.advance(1_000)
        expect(await one(h.throttle, bucket)).toMatchObject({ counted: true, remaining: 0 })
        expect(await one(h.throttle, bucket)).toMatchObject({ counted: false })
        h.advance(60_000)
        const verdicts = []
        for (let i = 0; i < 4; i++) verdicts.push((await one(h.throttle, bucket)).counted)
        expect(verdicts).toEqual([true, true, true, false])
      }))

    it('says once per burst that one began; a bucket that refilled starts a new one', () =>
      withThrottle(async (h) => {
        const bucket = freshBucket()
        const started = []
        for (let i = 0; i < 6; i++) started.push((await one(h.throttle, bucket)).burstStarted)
        expect(started).toEqual([false, false, true, false, false, false])
        // A token back and spent again: still the same burst.
        h.advance(1_000)
        expect(await one(h.throttle, bucket)).toMatchObject({ counted: true, burstStarted: false })
        // Full again (3 s after the last token was spent), then emptied: a new burst.
        h.advance(3_000)
        const again = []
        for (let i = 0; i < 3; i++) again.push((await one(h.throttle, bucket)).burstStarted)
        expect(again).toEqual([false, false, true])
      }))

    it('keeps buckets apart, and answers for several in one call', () =>
      withThrottle(async (h) => {
        const [a, b] = [freshBucket(), freshBucket()]
        for (let i = 0; i < 3; i++) await one(h.throttle, a)
        const verdicts = await h.throttle.fail([
          { id: a, rule: RULE },
          { id: b, rule: { capacity: 5, refillMs: 1_000 } },
        ])
        expect(verdicts.map((v) => v.counted)).toEqual([false, true])
        expect(verdicts[1]?.remaining).toBe(4)
      }))

    it('spends the same tokens from every instance on the shared state', () =>
      withThrottle(async (h) => {
        const bucket = freshBucket()
        await one(h.throttle, bucket)
        await one(h.sibling, bucket)
        await one(h.throttle, bucket)
        expect(await one(h.sibling, bucket)).toMatchObject({ counted: false, remaining: 0 })
      }))
  })
}

/** A clock tests move by hand. */
export class ManualClock {
  time = Date.UTC(2026, 0, 1, 12)
  now = () => this.time
}
