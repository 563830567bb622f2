import { TurnlineError } from '../../src/contract/errors.ts'
import type { Clock } from '../../src/ports/clock.ts'
import type {
  FailureThrottle,
  ThrottleBucket,
  ThrottleRule,
} from '../../src/ports/failure-throttle.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { BlockedBuckets } from './blocked-buckets.ts'

/** A bucket and what its burst line says of it (`scope`, `client`, …). */
export interface CountedBucket extends ThrottleBucket {
  fields: Record<string, unknown>
}

/**
 * Failures counted in the limit's buckets (failed authentications, failed webhook signatures):
 * in the coordinator, or in this process while it cannot be reached; the buckets seen empty
 * are remembered until their next token, so a flood is refused without a round trip. One
 * `auth_throttled` line per burst.
 */
export interface FailureCounter {
  /** How long the longest-blocked of `buckets` stays blocked (0: none is). */
  waitMs(buckets: readonly CountedBucket[]): number
  /** Counts one failure against each bucket: how long to refuse it (0: it was counted). */
  fail(buckets: readonly CountedBucket[]): Promise<number>
}

/** Where failures are counted (an `AuthFailureLimit`, functions/http/auth-throttle.ts). */
export interface FailureCounting {
  throttle: FailureThrottle
  /** Counts when `throttle` fails (no coordinator reachable): this process's own buckets. */
  fallback: FailureThrottle
  clock?: Clock | undefined
}

export function failureCounter(
  limit: FailureCounting,
  log: (entry: Record<string, unknown>) => void,
): FailureCounter {
  const clock = limit.clock ?? systemClock
  const blocked = new BlockedBuckets()
  let fallbackLoggedAt = Number.NEGATIVE_INFINITY

  const spend = async (buckets: readonly ThrottleBucket[]) => {
    try {
      return await limit.throttle.fail(buckets)
    } catch (error) {
      // Whatever went wrong with the shared counters, a failure is still counted, here.
      const now = clock.now()
      if (now - fallbackLoggedAt > 60_000) {
        fallbackLoggedAt = now
        log({
          ts: new Date(now).toISOString(),
          level: 'warn',
          msg: 'auth_throttle_local',
          error: error instanceof Error ? error.message : String(error),
        })
      }
      return limit.fallback.fail(buckets)
    }
  }

  return {
    waitMs: (buckets) =>
      blocked.waitMs(
        buckets.map((b) => b.id),
        clock.now(),
      ),
    async fail(buckets) {
      const now = clock.now()
      const verdicts = await spend(buckets)
      let refusedMs = 0
      for (const [i, verdict] of verdicts.entries()) {
        const bucket = buckets[i]
        if (!verdict || !bucket) continue
        if (verdict.retryAfterMs > 0) blocked.block(bucket.id, now + verdict.retryAfterMs, now)
        if (!verdict.counted) refusedMs = Math.max(refusedMs, verdict.retryAfterMs)
        if (verdict.burstStarted) {
          log({
            ts: new Date(clock.now()).toISOString(),
            level: 'warn',
            msg: 'auth_throttled',
            ...bucket.fields,
            limit_per_minute: Math.round(60_000 / bucket.rule.refillMs),
            retry_after_seconds: retrySeconds(verdict.retryAfterMs),
          })
        }
      }
      return refusedMs
    },
  }
}

export function perMinuteRule(perMinute: number): ThrottleRule {
  return { capacity: perMinute, refillMs: 60_000 / perMinute }
}

export const retrySeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

/** The 429 of a throttled failure, `reason` naming what failed (`details.reason`). */
export function throttledError(waitMs: number, reason: string, message: string): TurnlineError {
  const retryAfter = retrySeconds(waitMs)
  return new TurnlineError('rate_limited', `${message}; retry in ${retryAfter} s`, {
    retryable: true,
    retryAfter,
    details: { reason, retry_after_seconds: retryAfter },
  })
}
