import { TurnlineError } from '../../src/contract/errors.ts'
import type { EffectiveLimits, TenantLimits } from '../../src/contract/tenancy.ts'
import type { Clock } from '../../src/ports/clock.ts'
import {
  dayEndMs,
  type TenantLimiter,
  toMicroUsd,
  type WindowVerdict,
} from '../../src/ports/tenant-limiter.ts'

/**
 * Per-tenant limits and usage accounting (docs/configuration.md#tenancy): what createApp needs
 * to answer 429s, count usage and serve `GET /v1/usage`.
 */
export interface Tenancy {
  limiter: TenantLimiter
  /** The deployment's defaults (TURNLINE_LIMIT_*); absent fields are unlimited. */
  defaults: EffectiveLimits
  /** A tenant's overrides from the key registry. */
  overrides?: (tenant: string) => TenantLimits | undefined
  /** A turn slot's lease: renewed while its turn runs, lapses this long after a crash. */
  slotTtlMs: number
  clock: Clock
  /** Limiter faults around turns that must not fail them (a charge, a release). */
  log?: (entry: Record<string, unknown>) => void
}

/** The limits in force for `tenant`: an override, else the default; `null` lifts a default. */
export function limitsOf(tenancy: Tenancy, tenant: string): EffectiveLimits {
  const override = tenancy.overrides?.(tenant)
  const pick = (name: keyof TenantLimits, fallback: number | undefined) => {
    const value = override?.[name]
    if (value === null) return undefined
    return value ?? fallback
  }
  const limits: EffectiveLimits = {}
  const rpm = pick('requests_per_minute', tenancy.defaults.requestsPerMinute)
  const turns = pick('concurrent_turns', tenancy.defaults.concurrentTurns)
  const tokens = pick('tokens_per_day', tenancy.defaults.tokensPerDay)
  const cost = pick('cost_usd_per_day', tenancy.defaults.costUsdPerDay)
  if (rpm !== undefined) limits.requestsPerMinute = rpm
  if (turns !== undefined) limits.concurrentTurns = turns
  if (tokens !== undefined) limits.tokensPerDay = tokens
  if (cost !== undefined) limits.costUsdPerDay = cost
  return limits
}

/**
 * The request-window headers (the IETF draft's `RateLimit-Limit`, `RateLimit-Remaining`,
 * `RateLimit-Reset` in seconds), on every answer to a tenant that has a request limit.
 */
export function windowHeaders(verdict: WindowVerdict, nowMs: number): Record<string, string> {
  return {
    'ratelimit-limit': String(verdict.limit),
    'ratelimit-remaining': String(verdict.remaining),
    'ratelimit-reset': String(secondsUntil(verdict.resetAtMs, nowMs)),
  }
}

export function rateLimited(verdict: WindowVerdict, nowMs: number): TurnlineError {
  const retryAfter = secondsUntil(verdict.resetAtMs, nowMs)
  return new TurnlineError(
    'rate_limited',
    `too many requests: the limit is ${verdict.limit} per minute; retry in ${retryAfter} s`,
    {
      retryable: true,
      retryAfter,
      details: { limit: verdict.limit, window_seconds: 60, retry_after_seconds: retryAfter },
    },
  )
}

/**
 * Refuses a turn that would start with today's tokens or cost already at the tenant's limit
 * (429 `quota_exceeded` until the UTC day ends). A turn that starts below the limit runs to its
 * end and is charged in full, so a day may end slightly above it.
 */
export async function checkDailyQuota(
  tenancy: Tenancy,
  tenant: string,
  limits: EffectiveLimits,
): Promise<void> {
  if (limits.tokensPerDay === undefined && limits.costUsdPerDay === undefined) return
  const usage = await tenancy.limiter.usageToday(tenant)
  const now = tenancy.clock.now()
  const retryAfter = secondsUntil(dayEndMs(now), now)
  const refuse = (what: string, limit: number, used: number) =>
    new TurnlineError(
      'quota_exceeded',
      `the daily ${what} quota of tenant ${tenant} is used up (${used} of ${limit}); it resets at 00:00 UTC`,
      {
        retryable: true,
        retryAfter,
        details: { quota: what, limit, used, day: usage.day, retry_after_seconds: retryAfter },
      },
    )
  if (limits.tokensPerDay !== undefined && usage.tokens >= limits.tokensPerDay) {
    throw refuse('tokens', limits.tokensPerDay, usage.tokens)
  }
  if (
    limits.costUsdPerDay !== undefined &&
    usage.costMicroUsd >= toMicroUsd(limits.costUsdPerDay)
  ) {
    throw refuse('cost_usd', limits.costUsdPerDay, usage.costMicroUsd / 1_000_000)
  }
}

/** Takes a turn slot for the length of `run`, renewing its lease meanwhile; 429 when none free. */
export async function withTurnSlot<T>(
  tenancy: Tenancy,
  tenant: string,
  limit: number | undefined,
  run: () => Promise<T>,
): Promise<T> {
  if (limit === undefined) return run()
  const slot = crypto.randomUUID()
  const { limiter, slotTtlMs } = tenancy
  const verdict = await limiter.acquireSlot(tenant, slot, limit, slotTtlMs)
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
    await limiter.releaseSlot(tenant, slot).catch((error: unknown) => {
      // The slot lapses at its deadline.
      tenancy.log?.(fault('turn slot release failed', tenant, error))
    })
  }
}

/** The ServiceDeps meter: charges each model response to the tenant's day. */
export function usageMeter(tenancy: Tenancy) {
  return async (tenant: string, call: { usage: TokenUsage; costUsd: number | null }) => {
    const tokens = call.usage.input_tokens + call.usage.output_tokens
    const costMicroUsd = call.costUsd === null ? 0 : toMicroUsd(call.costUsd)
    if (tokens === 0 && costMicroUsd === 0) return
    try {
      await tenancy.limiter.charge(tenant, { tokens, costMicroUsd })
    } catch (error) {
      // The model was paid for already; failing the turn would not undo that.
      tenancy.log?.(fault('usage charge failed', tenant, error, { tokens, costMicroUsd }))
    }
  }
}

interface TokenUsage {
  input_tokens: number
  output_tokens: number
}

export function secondsUntil(atMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((atMs - nowMs) / 1000))
}

function fault(
  msg: string,
  tenant: string,
  error: unknown,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const message = error instanceof Error ? error.message : String(error)
  return { level: 'error', msg, tenant, error: message, ...extra }
}
