import * as z from 'zod'
import { envFlag as flag, envInteger as integer } from '../../src/contract/env-values.ts'

/**
 * The tenancy variables (docs/configuration.md#tenancy), spread into the environment schema of
 * env-config.ts. An empty value counts as unset.
 */
const usd = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?$/, 'must be a decimal number of US dollars, like 12.50')
  .transform(Number)
  .pipe(z.number().positive().max(1e9))

export const TenancyEnvShape = {
  /** Read API keys (hashed) and per-tenant limits from the key registry in the object store. */
  TURNLINE_KEY_REGISTRY: flag.optional(),
  /** How old the registry copy in memory may get (revocation delay). */
  TURNLINE_KEY_RELOAD_SECONDS: integer(1, 3600).default(30),
  TURNLINE_LIMIT_REQUESTS_PER_MINUTE: integer(1, 1_000_000_000).optional(),
  TURNLINE_LIMIT_CONCURRENT_TURNS: integer(1, 1_000_000).optional(),
  TURNLINE_LIMIT_TOKENS_PER_DAY: integer(1, Number.MAX_SAFE_INTEGER).optional(),
  TURNLINE_LIMIT_COST_USD_PER_DAY: usd.optional(),
  /** Bytes of tool output a tenant may keep as output artifacts per UTC day. */
  TURNLINE_LIMIT_OUTPUT_BYTES_PER_DAY: integer(1, Number.MAX_SAFE_INTEGER).optional(),
  /** Lease of a running turn's slot: renewed while it runs, lapses this long after a crash. */
  TURNLINE_TURN_SLOT_TTL_MS: integer(1000, 3_600_000).default(60_000),
  /** Output tokens a model call reserves against the daily quotas when it sets no maximum. */
  TURNLINE_RESERVE_OUTPUT_TOKENS: integer(0, 10_000_000).default(4096),
  /** A model call's reservation lapses this long after it was made if never settled (a crash). */
  TURNLINE_RESERVATION_TTL_MS: integer(1000, 86_400_000).default(900_000),
}

/** True when requests are authenticated: API keys configured, or the key registry on. */
export function isMultiTenantEnv(env: {
  TURNLINE_API_KEYS?: readonly unknown[] | undefined
  TURNLINE_KEY_REGISTRY?: boolean | undefined
}): boolean {
  return (env.TURNLINE_API_KEYS ?? []).length > 0 || env.TURNLINE_KEY_REGISTRY === true
}

/** True when any TURNLINE_LIMIT_* default is set. */
export function hasLimitDefaults(env: Record<string, unknown>): boolean {
  return Object.keys(TenancyEnvShape).some(
    (name) => name.startsWith('TURNLINE_LIMIT_') && env[name] !== undefined,
  )
}
