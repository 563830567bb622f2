import type { ThrottleRule, ThrottleVerdict } from '../../src/ports/failure-throttle.ts'

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
