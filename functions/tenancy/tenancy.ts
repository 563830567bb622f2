import { TurnlineError } from '../../src/contract/errors.ts'
import type { EffectiveLimits, TenantLimits } from '../../src/contract/tenancy.ts'
import type { Clock } from '../../src/ports/clock.ts'
import type { TenantLimiter, WindowVerdict } from '../../src/ports/tenant-limiter.ts'

/**
 * Per-tenant limits and usage accounting (docs/configuration.md#tenancy): what createApp needs
 * to answer 429s and serve `GET /v1/usage`, and the engine's admission is built on
 * (`tenant-admission.ts`).
 */
export interface Tenancy {
  limiter: TenantLimiter
  /** The deployment's defaults (TURNLINE_LIMIT_*); absent fields are unlimited. */
  defaults: EffectiveLimits
  /** A tenant's overrides from the key registry. */
  overrides?: (tenant: string) => TenantLimits | undefined
  /** A turn slot's lease: renewed while its turn runs, lapses this long after a crash. */
  slotTtlMs: number
  /** A model call's quota reservation lapses this long after it was made if never settled. */
  reservationTtlMs: number
  /** Output tokens reserved for a model call that sets no `max_output_tokens`. */
  defaultOutputTokens: number
  clock: Clock
  /** Limiter faults around turns that must not fail them (a settlement, a release). */
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
  const output = pick('output_bytes_per_day', tenancy.defaults.outputBytesPerDay)
  if (rpm !== undefined) limits.requestsPerMinute = rpm
  if (turns !== undefined) limits.concurrentTurns = turns
  if (tokens !== undefined) limits.tokensPerDay = tokens
  if (cost !== undefined) limits.costUsdPerDay = cost
  if (output !== undefined) limits.outputBytesPerDay = output
  const perOutput = pick('output_bytes_per_output', undefined)
  const perSession = pick('output_bytes_per_session', undefined)
  if (perOutput !== undefined) limits.outputBytesPerOutput = perOutput
  if (perSession !== undefined) limits.outputBytesPerSession = perSession
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

export function secondsUntil(atMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((atMs - nowMs) / 1000))
}
