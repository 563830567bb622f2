import { TurnlineError } from '../../src/contract/errors.ts'
import type { EffectiveLimits } from '../../src/contract/tenancy.ts'
import type { Admission, ModelCallEstimate, ModelCallHold } from '../../src/ports/admission.ts'
import { stampedLeaseId } from '../../src/shared/held-retry-after.ts'
import { toMicroUsd } from '../../src/shared/micro-usd.ts'
import { dayEndMs, utcDay } from '../../src/shared/utc-day.ts'
import { limitsOf, secondsUntil, type Tenancy } from './tenancy.ts'

/**
 * Seconds a call refused because other calls in flight hold the rest of the quota is told to wait:
 * holds settle as soon as their calls answer, usually within seconds.
 */
const HELD_RETRY_SECONDS = 5

/**
 * The engine's admission (src/ports/admission.ts) on the tenant's limits and the shared limiter
 * (docs/configuration.md#limits):
 *
 * - a step is refused with 429 `quota_exceeded` once today's usage plus the holds of calls in
 *   flight reached the daily tokens or cost, and with `too_many_concurrent_turns` when the
 *   tenant's turn slots are all taken; otherwise it runs in a slot;
 * - a model call of a tenant with a daily quota holds its estimate first (the same 429 when the
 *   quota is used up or held), and settles its usage after; without a quota it is only settled,
 *   which counts the day's usage for `GET /v1/usage`.
 */
export function tenantAdmission(tenancy: Tenancy): Admission {
  return {
    defaultOutputTokens: tenancy.defaultOutputTokens,
    async step(tenant, run) {
      const limits = limitsOf(tenancy, tenant)
      // The quota check reads today's usage, the slot is its own key: asked together, so a
      // limited step waits for one round trip to the limiter, not two.
      const quota = checkDailyQuota(tenancy, tenant, limits)
      return withTurnSlot(tenancy, tenant, limits.concurrentTurns, quota, run)
    },
    reserve: (tenant, call) => reserve(tenancy, tenant, call),
    async keepOutput(tenant, bytes) {
      const limit = limitsOf(tenancy, tenant).outputBytesPerDay
      const verdict = await tenancy.limiter.keepOutput(tenant, bytes, limit)
      if (verdict.status === 'counted') return { kept: true }
      const day = utcDay(tenancy.clock.now())
      return {
        kept: false,
        reason:
          `the ${limit} bytes of tool output tenant ${tenant} may keep per day ` +
          `(output_bytes_per_day; ${verdict.used} kept on ${day}, resets at 00:00 UTC)`,
      }
    },
    outputCaps(tenant) {
      const limits = limitsOf(tenancy, tenant)
      return {
        ...(limits.outputBytesPerOutput ? { perOutput: limits.outputBytesPerOutput } : {}),
        ...(limits.outputBytesPerSession ? { perSession: limits.outputBytesPerSession } : {}),
      }
    },
    async returnOutput(tenant, bytes) {
      await tenancy.limiter
        .returnOutput(tenant, bytes)
        .catch((error: unknown) => tenancy.log?.(fault('kept output return failed', tenant, error)))
    },
  }
}

async function reserve(
  tenancy: Tenancy,
  tenant: string,
  call: ModelCallEstimate,
): Promise<ModelCallHold> {
  const { limiter } = tenancy
  const limits = limitsOf(tenancy, tenant)
  const costLimit =
    limits.costUsdPerDay === undefined ? undefined : toMicroUsd(limits.costUsdPerDay)
  const held = limits.tokensPerDay !== undefined || costLimit !== undefined
  if (held) {
    const verdict = await limiter.reserve(tenant, {
      id: call.id,
      ...call.estimate(),
      ttlMs: tenancy.reservationTtlMs,
      ...(limits.tokensPerDay === undefined ? {} : { tokensPerDay: limits.tokensPerDay }),
      ...(costLimit === undefined ? {} : { costMicroUsdPerDay: costLimit }),
    })
    if (verdict.status === 'refused') {
      const day = utcDay(tenancy.clock.now())
      throw verdict.quota === 'tokens'
        ? quotaExceeded(tenancy, tenant, day, 'tokens', limits.tokensPerDay ?? 0, verdict)
        : quotaExceeded(tenancy, tenant, day, 'cost_usd', limits.costUsdPerDay ?? 0, {
            used: verdict.used / 1_000_000,
            reserved: verdict.reserved / 1_000_000,
          })
    }
  }
  return {
    settle: (charge) =>
      limiter.settle(tenant, call.id, charge).then(
        () => undefined,
        // The model was paid for already; failing the turn would not undo that.
        (error: unknown) => tenancy.log?.(fault('usage settlement failed', tenant, error, charge)),
      ),
    release: async () => {
      if (!held) return
      // A hold that cannot be dropped lapses at its deadline.
      await limiter
        .release(tenant, call.id)
        .catch((error: unknown) => tenancy.log?.(fault('quota hold release failed', tenant, error)))
    },
  }
}

/**
 * Refuses a step that would start with today's tokens or cost, plus what model calls in flight
 * hold, at the tenant's limit. A step that starts below it may take the day past the limit by
 * what its model calls are let through (each is reserved before it is made).
 */
async function checkDailyQuota(
  tenancy: Tenancy,
  tenant: string,
  limits: EffectiveLimits,
): Promise<void> {
  if (limits.tokensPerDay === undefined && limits.costUsdPerDay === undefined) return
  const usage = await tenancy.limiter.usageToday(tenant)
  const tokens = limits.tokensPerDay
  if (tokens !== undefined && usage.tokens + usage.reservedTokens >= tokens) {
    throw quotaExceeded(tenancy, tenant, usage.day, 'tokens', tokens, {
      used: usage.tokens,
      reserved: usage.reservedTokens,
    })
  }
  const cost = limits.costUsdPerDay
  if (cost !== undefined && usage.costMicroUsd + usage.reservedCostMicroUsd >= toMicroUsd(cost)) {
    throw quotaExceeded(tenancy, tenant, usage.day, 'cost_usd', cost, {
      used: usage.costMicroUsd / 1_000_000,
      reserved: usage.reservedCostMicroUsd / 1_000_000,
    })
  }
}

/**
 * 429 `quota_exceeded`: used up until 00:00 UTC, or held by calls in flight for a few seconds.
 * `used` and `reserved` in the quota's unit (tokens, USD).
 */
function quotaExceeded(
  tenancy: Tenancy,
  tenant: string,
  day: string,
  quota: 'tokens' | 'cost_usd',
  limit: number,
  usage: { used: number; reserved: number },
): TurnlineError {
  const now = tenancy.clock.now()
  const usedUp = usage.used >= limit
  const retryAfter = usedUp ? secondsUntil(dayEndMs(now), now) : HELD_RETRY_SECONDS
  const message = usedUp
    ? `the daily ${quota} quota of tenant ${tenant} is used up (${usage.used} of ${limit}); it resets at 00:00 UTC`
    : `the daily ${quota} quota of tenant ${tenant} is held by model calls in flight (${usage.used} used and ${usage.reserved} reserved of ${limit}); retry in ${retryAfter} s`
  return new TurnlineError('quota_exceeded', message, {
    retryable: true,
    retryAfter,
    details: { quota, limit, ...usage, day, retry_after_seconds: retryAfter },
  })
}

/**
 * Takes a turn slot for the length of `run`, renewing its lease meanwhile; 429 when none free.
 * The slot is asked for while `quota` (the daily quota check) is under way: when the quota
 * refuses, a slot taken meanwhile is given back and the quota's 429 answers, as when it was
 * checked first.
 */
async function withTurnSlot<T>(
  tenancy: Tenancy,
  tenant: string,
  limit: number | undefined,
  quota: Promise<void>,
  run: () => Promise<T>,
): Promise<T> {
  if (limit === undefined) {
    await quota
    return run()
  }
  const slot = stampedLeaseId(tenancy.clock.now(), crypto.randomUUID())
  const { limiter, slotTtlMs } = tenancy
  const [checked, taken] = await Promise.allSettled([
    quota,
    limiter.acquireSlot(tenant, slot, limit, slotTtlMs),
  ])
  if (checked.status === 'rejected') {
    if (taken.status === 'fulfilled' && taken.value.status === 'acquired') {
      await releaseSlot(tenancy, tenant, slot)
    }
    throw checked.reason
  }
  if (taken.status === 'rejected') throw taken.reason
  const verdict = taken.value
  if (verdict.status === 'full') {
    const retryAfter = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))
    throw new TurnlineError(
      'too_many_concurrent_turns',
      `tenant ${tenant} already runs ${verdict.active} turns (the limit is ${limit}); retry when one ends`,
      {
        retryable: true,
        retryAfter,
        details: { limit, active: verdict.active, retry_after_seconds: retryAfter },
      },
    )
  }
  const renew = setInterval(
    () => {
      limiter.renewSlot(tenant, slot, slotTtlMs).catch((error: unknown) => {
        tenancy.log?.(fault('turn slot renewal failed', tenant, error))
      })
    },
    Math.max(50, Math.floor(slotTtlMs / 3)),
  )
  try {
    return await run()
  } finally {
    clearInterval(renew)
    await releaseSlot(tenancy, tenant, slot)
  }
}

/** Gives a turn slot back; never rejects (a slot that cannot be released lapses at its deadline). */
async function releaseSlot(tenancy: Tenancy, tenant: string, slot: string): Promise<void> {
  await tenancy.limiter.releaseSlot(tenant, slot).catch((error: unknown) => {
    tenancy.log?.(fault('turn slot release failed', tenant, error))
  })
}

function fault(
  msg: string,
  tenant: string,
  error: unknown,
  extra: object = {},
): Record<string, unknown> {
  const message = error instanceof Error ? error.message : String(error)
  return { level: 'error', msg, tenant, error: message, ...extra }
}
