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

/** What a bucket remembers: fractional tokens at an instant, and whether a burst was logged. */
export interface BucketState {
  tokens: number
  atMs: number
  burst: boolean
}

/**
 * One failure against a bucket (undefined: never seen, or forgotten when full): the state after
 * it and the verdict. The Redis script is the same arithmetic in Lua.
 */
export function spendToken(
  state: BucketState | undefined,
  nowMs: number,
  rule: ThrottleRule,
): { state: BucketState; verdict: ThrottleVerdict; keepMs: number } {
  const elapsed = Math.max(0, nowMs - (state?.atMs ?? nowMs))
  let tokens = Math.min(rule.capacity, (state?.tokens ?? rule.capacity) + elapsed / rule.refillMs)
  // A bucket that refilled completely is a new one (its Redis key has expired by then).
  const inBurst = (state?.burst ?? false) && tokens < rule.capacity
  const counted = tokens >= 1
  if (counted) tokens -= 1
  const empty = tokens < 1
  const burstStarted = empty && !inBurst
  return {
    state: { tokens, atMs: nowMs, burst: empty || inBurst },
    verdict: {
      counted,
      remaining: Math.floor(tokens),
      retryAfterMs: empty ? Math.ceil((1 - tokens) * rule.refillMs) : 0,
      burstStarted,
    },
    keepMs: fullAfterMs(tokens, rule),
  }
}

/** How long until a bucket with `tokens` is full again (then it may be forgotten). */
export function fullAfterMs(tokens: number, rule: ThrottleRule): number {
  return Math.ceil((rule.capacity - tokens) * rule.refillMs)
}
