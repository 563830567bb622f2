import * as z from 'zod'

/**
 * Tenancy: the key registry (hashed API keys → tenant, per-tenant limits), the limits
 * themselves, and the usage report of `GET /v1/usage`. Keys are never stored in plain text: a
 * registry entry holds `sha256:<64 hex>`, the SHA-256 of the key's UTF-8 bytes.
 */

/** `sha256:` followed by 64 lowercase hex digits. */
export const KEY_HASH = /^sha256:[0-9a-f]{64}$/

/** A tenant name: also a storage path segment, so no leading `.`/`-` and no `..`. */
export const TENANT_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

export const TenantNameSchema = z
  .string()
  .regex(TENANT_NAME, 'must be 1–128 characters from A-Z a-z 0-9 . _ -, not starting with . or -')
  .refine((name) => !name.includes('..'), 'must not contain ".."')

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)

/**
 * Limits of one tenant. An absent field falls back to the deployment default
 * (`TURNLINE_LIMIT_*`); `null` lifts a default for this tenant; absent everywhere = unlimited.
 */
export const TenantLimitsSchema = z.strictObject({
  /** Requests per minute over every authenticated /v1 route (sliding window). */
  requests_per_minute: count.min(1).nullable().optional(),
  /** Turn-stepping calls running at once. */
  concurrent_turns: count.min(1).nullable().optional(),
  /** Model tokens (input + output) per UTC day. */
  tokens_per_day: count.min(1).nullable().optional(),
  /** Estimated model cost in USD per UTC day. */
  cost_usd_per_day: z.number().positive().max(1e9).nullable().optional(),
})
export type TenantLimits = z.infer<typeof TenantLimitsSchema>

/** Limits in force for a tenant after defaults are applied: undefined = unlimited. */
export interface EffectiveLimits {
  requestsPerMinute?: number
  concurrentTurns?: number
  tokensPerDay?: number
  costUsdPerDay?: number
}

export const RegistryKeySchema = z.strictObject({
  /** `sha256:<hex>` of the key. */
  hash: z.string().regex(KEY_HASH, 'must be sha256:<64 lowercase hex digits>'),
  tenant: TenantNameSchema,
  /** Free text for operators (who holds the key); never the key itself. */
  label: z.string().max(200).optional(),
  created_at: z.iso.datetime().optional(),
})
export type RegistryKey = z.infer<typeof RegistryKeySchema>

export const KEY_REGISTRY_FORMAT = 'turnline.key_registry'

/** The key registry object (`.turnline/api-keys.json` in the object store), replaced by CAS. */
export const KeyRegistrySchema = z
  .strictObject({
    format: z.literal(KEY_REGISTRY_FORMAT),
    version: z.literal(1),
    /** Incremented by every write. */
    revision: z.number().int().min(0),
    updated_at: z.iso.datetime().optional(),
    keys: z.array(RegistryKeySchema).max(100_000),
    /** Per-tenant limits overriding the deployment defaults. */
    tenants: z.record(TenantNameSchema, z.strictObject({ limits: TenantLimitsSchema })).default({}),
  })
  .superRefine((registry, ctx) => {
    const seen = new Set<string>()
    for (const [index, key] of registry.keys.entries()) {
      if (seen.has(key.hash)) {
        ctx.addIssue({ code: 'custom', path: ['keys', index], message: 'hash listed twice' })
      }
      seen.add(key.hash)
    }
  })
export type KeyRegistry = z.output<typeof KeyRegistrySchema>

/** An empty registry (what the first write starts from). */
export function emptyKeyRegistry(): KeyRegistry {
  return { format: KEY_REGISTRY_FORMAT, version: 1, revision: 0, keys: [], tenants: {} }
}

const LimitUsageSchema = z.object({
  limit: z.number().nullable().describe('The limit; null when none applies.'),
  used: z.number().describe('Used so far.'),
  remaining: z.number().nullable().describe('What is left; null when no limit applies.'),
})

const QuotaUsageSchema = LimitUsageSchema.extend({
  reserved: z
    .number()
    .optional()
    .describe(
      'Held by model calls in flight (their estimates, replaced by their usage once they answer); `remaining` is what neither used nor reserved leaves.',
    ),
})

/** `GET /v1/usage`: the calling tenant's usage today (UTC) and its limits. */
export const UsageReportSchema = z
  .object({
    tenant: z.string().describe('The calling tenant.'),
    day: z.string().describe('The UTC day counted, `YYYY-MM-DD`.'),
    resets_at: z.string().describe('When the daily counters start over (ISO 8601).'),
    requests: z
      .object({
        today: z.number().int().describe('Authenticated requests today, refused ones included.'),
        per_minute: LimitUsageSchema.extend({
          resets_at: z.string().describe('When the current one-minute window ends (ISO 8601).'),
        }).describe('The sliding one-minute request window.'),
      })
      .describe('Requests.'),
    concurrent_turns: LimitUsageSchema.describe('Turns running now.'),
    tokens: QuotaUsageSchema.describe('Model tokens today (input + output).'),
    cost_usd: QuotaUsageSchema.describe('Estimated model cost today, in US dollars.'),
  })
  .meta({
    id: 'UsageReport',
    description: "The calling tenant's usage today (UTC) and its limits.",
  })
export type UsageReport = z.infer<typeof UsageReportSchema>
