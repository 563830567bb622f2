import type { Clock } from '../../src/ports/clock.ts'
import type {
  FailureThrottle,
  ThrottleBucket,
  ThrottleVerdict,
} from '../../src/ports/failure-throttle.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { type BucketState, spendToken } from './spend-token.ts'

export interface MemoryFailureThrottleOptions {
  clock?: Clock
  /** Most buckets kept (default 100,000): at it, full ones go first, then the oldest. */
  maxBuckets?: number
}

/**
 * The FailureThrottle of one process (no coordinator, or while it cannot be reached): the same
 * arithmetic as the Redis script, on a Map. A bucket is dropped once it would be full again, and
 * the Map never holds more than `maxBuckets` (so failures from ever new addresses cannot grow it
 * without end; what is dropped first is what matters least).
 */
export class MemoryFailureThrottle implements FailureThrottle {
  readonly #clock: Clock
  readonly #max: number
  readonly #buckets = new Map<string, { state: BucketState; fullAtMs: number }>()

  constructor(options: MemoryFailureThrottleOptions = {}) {
    this.#clock = options.clock ?? systemClock
    this.#max = options.maxBuckets ?? 100_000
  }

  async fail(buckets: readonly ThrottleBucket[]): Promise<ThrottleVerdict[]> {
    const now = this.#clock.now()
    return buckets.map(({ id, rule }) => {
      const held = this.#buckets.get(id)
      const known = held && held.fullAtMs > now ? held.state : undefined
      const { state, verdict, keepMs } = spendToken(known, now, rule)
      // Re-inserted, so the Map's order is the order of last failure.
      this.#buckets.delete(id)
      this.#makeRoom(now)
      this.#buckets.set(id, { state, fullAtMs: now + keepMs })
      return verdict
    })
  }

  /** Buckets held now (tests). */
  get size(): number {
    return this.#buckets.size
  }

  /** At the limit: drops the full buckets, then the oldest down to 90 % (amortized O(1)). */
  #makeRoom(now: number): void {
    if (this.#buckets.size < this.#max) return
    for (const [bucket, held] of this.#buckets) {
      if (held.fullAtMs <= now) this.#buckets.delete(bucket)
    }
    const keep = Math.floor(this.#max * 0.9)
    for (const bucket of this.#buckets.keys()) {
      if (this.#buckets.size <= keep) break
      this.#buckets.delete(bucket)
    }
  }
}
