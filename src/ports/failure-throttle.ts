/**
 * FailureThrottle: token buckets that count failures (failed authentications), kept where the
 * coordinator keeps its state so every instance spends the same tokens — `adapters/upstash` and
 * `adapters/redis-tcp` (one script, `redis-failure-throttle.ts`), `adapters/memory` (one
 * process). A bucket holds at most `capacity` tokens and gains one every `refillMs`; a failure
 * takes one. An empty bucket means: refuse before even looking at the next attempt.
 *
 * A bucket that has refilled completely is forgotten (its Redis key expires), so state stays
 * bounded by the buckets failing now. Instants come from the caller's clock.
 */
export interface ThrottleRule {
  /** Most tokens a bucket holds: the failures allowed in a burst. */
  capacity: number
  /** One token comes back every `refillMs`. */
  refillMs: number
}

export interface ThrottleVerdict {
  /** The bucket had a token and this failure took it; false: it was empty already. */
  counted: boolean
  /** Whole tokens left after this failure. */
  remaining: number
  /** Until the next whole token (0 while tokens remain). */
  retryAfterMs: number
  /**
   * This failure left the bucket empty for the first time since it was last full: a burst of
   * failures begins (worth one operator log line, not one per failure).
   */
  burstStarted: boolean
}

/** A bucket by name, with its rule. */
export interface ThrottleBucket {
  id: string
  rule: ThrottleRule
}

export interface FailureThrottle {
  /** Counts one failure against each bucket, in one call; verdicts in the order of `buckets`. */
  fail(buckets: readonly ThrottleBucket[]): Promise<ThrottleVerdict[]>
}
