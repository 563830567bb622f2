import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import type { IoDeadline } from '../../adapters/shared/io-deadline.ts'
import { UpstashTenantLimiter } from '../../adapters/upstash/upstash-tenant-limiter.ts'
import type { EffectiveLimits } from '../../src/contract/tenancy.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import type { TenantLimiter } from '../../src/ports/tenant-limiter.ts'
import { operatorLogLine } from '../../src/shared/operator-log-line.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import {
  isUpstashConfigured,
  type RedisKeyspace,
  redisNamespaceOf,
  upstashOf,
} from '../coordinator-choice.ts'
import { ConfigError, type EnvConfig } from '../env-config.ts'
import { KeyDirectory } from './key-directory.ts'
import type { Tenancy } from './tenancy.ts'
import { hasLimitDefaults, isMultiTenantEnv } from './tenancy-env.ts'

/** Longest wait between re-reads of the registry triggered by unknown keys. */
const MISS_RELOAD_MS = 5_000

export interface TenancyParts {
  tenancy: Tenancy
  /** The key registry, when TURNLINE_KEY_REGISTRY is on. */
  registry?: KeyDirectory
}

/**
 * The tenancy of a deployment (functions/deps.ts): the limiter where the coordinator keeps its
 * state (Upstash, plain Redis, or this process), the deployment's default limits, and the key
 * registry. A single-tenant server without limits counts its usage in this process only, so it
 * makes no extra call to Redis.
 */
export function tenancyParts(input: {
  config: EnvConfig
  store: ObjectStore
  deadline: IoDeadline
  redisLimiter: ((url: string, keyspace: RedisKeyspace) => TenantLimiter) | undefined
  /** The entry's fetch, for Upstash (default: the global one). */
  fetch: typeof fetch | undefined
  onTenants: (tenants: readonly string[]) => Promise<void>
  notices: string[]
  log: ((entry: Record<string, unknown>) => void) | undefined
}): TenancyParts {
  const { config, notices } = input
  const shared = isMultiTenantEnv(config) || hasLimitDefaults(config)
  const log =
    input.log ?? ((entry: Record<string, unknown>) => console.error(operatorLogLine(entry)))
  const tenancy: Tenancy = {
    limiter: shared ? limiterOf(input) : new MemoryTenantLimiter(),
    defaults: defaultsOf(config),
    slotTtlMs: config.TURNLINE_TURN_SLOT_TTL_MS,
    reservationTtlMs: config.TURNLINE_RESERVATION_TTL_MS,
    defaultOutputTokens: config.TURNLINE_RESERVE_OUTPUT_TOKENS,
    clock: systemClock,
    log,
  }
  if (hasLimitDefaults(config))
    notices.push(`default limits per tenant: ${describe(tenancy.defaults)}`)
  if (!config.TURNLINE_KEY_REGISTRY) return { tenancy }
  const reloadMs = config.TURNLINE_KEY_RELOAD_SECONDS * 1000
  const registry = new KeyDirectory({
    store: input.store,
    reloadMs,
    missReloadMs: Math.min(MISS_RELOAD_MS, reloadMs),
    // A request waits for the first read as long as one storage call may take.
    firstReadWaitMs: input.deadline.budgetMs,
    onTenants: input.onTenants,
    log,
  })
  tenancy.overrides = (tenant) => registry.limitsFor(tenant)
  notices.push(
    `API keys also from the key registry in the store (re-read every ${config.TURNLINE_KEY_RELOAD_SECONDS} s; npm run keys)`,
  )
  return { tenancy, registry }
}

function limiterOf(input: Parameters<typeof tenancyParts>[0]): TenantLimiter {
  const { config, deadline } = input
  const namespace = redisNamespaceOf(config)
  if (isUpstashConfigured(config)) {
    return new UpstashTenantLimiter({ ...upstashOf(config, input), deadline, namespace })
  }
  if (config.REDIS_URL !== undefined) {
    if (!input.redisLimiter) {
      throw new ConfigError([
        'REDIS_URL: this runtime has no TCP Redis client for the per-tenant limits; use Upstash',
      ])
    }
    return input.redisLimiter(config.REDIS_URL, { deadline, namespace })
  }
  return new MemoryTenantLimiter()
}

function defaultsOf(config: EnvConfig): EffectiveLimits {
  const limits: EffectiveLimits = {}
  if (config.TURNLINE_LIMIT_REQUESTS_PER_MINUTE !== undefined) {
    limits.requestsPerMinute = config.TURNLINE_LIMIT_REQUESTS_PER_MINUTE
  }
  if (config.TURNLINE_LIMIT_CONCURRENT_TURNS !== undefined) {
    limits.concurrentTurns = config.TURNLINE_LIMIT_CONCURRENT_TURNS
  }
  if (config.TURNLINE_LIMIT_TOKENS_PER_DAY !== undefined) {
    limits.tokensPerDay = config.TURNLINE_LIMIT_TOKENS_PER_DAY
  }
  if (config.TURNLINE_LIMIT_COST_USD_PER_DAY !== undefined) {
    limits.costUsdPerDay = config.TURNLINE_LIMIT_COST_USD_PER_DAY
  }
  if (config.TURNLINE_LIMIT_OUTPUT_BYTES_PER_DAY !== undefined) {
    limits.outputBytesPerDay = config.TURNLINE_LIMIT_OUTPUT_BYTES_PER_DAY
  }
  return limits
}

function describe(limits: EffectiveLimits): string {
  const parts = [
    limits.requestsPerMinute !== undefined && `${limits.requestsPerMinute} requests/min`,
    limits.concurrentTurns !== undefined && `${limits.concurrentTurns} concurrent turns`,
    limits.tokensPerDay !== undefined && `${limits.tokensPerDay} tokens/day`,
    limits.costUsdPerDay !== undefined && `$${limits.costUsdPerDay}/day`,
    limits.outputBytesPerDay !== undefined && `${limits.outputBytesPerDay} output bytes/day`,
  ]
  return parts.filter(Boolean).join(', ')
}
