import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { STORE_ROOT_FOLDERS } from './store-root-folders.ts'

/**
 * Tenancy: the key registry (hashed API keys → tenant, per-tenant limits), the limits
 * themselves, and the usage report of `GET /v1/usage`. Keys are never stored in plain text: a
 * registry entry holds `sha256:<64 hex>`, the SHA-256 of the key's UTF-8 bytes.
 */

/** `sha256:` followed by 64 lowercase hex digits. */
export const KEY_HASH = /^sha256:[0-9a-f]{64}$/

/** The syntax of a tenant name: also a storage path segment, so no leading `.`/`-` and no `..`. */
export const TENANT_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

const TENANT_SYNTAX =
  'must be 1–128 characters from A-Z a-z 0-9 . _ -, not starting with "." or "-", without ".."'

/**
 * Folders the deployment keeps beside the tenants' folders, at the root of the store or the data
 * dir (all of them: `store-root-folders.ts`): where earlier versions kept the embedded runner's
 * workspaces (`runner`, `TURNLINE_DATA_DIR/runner`). The store's own
 * names (`.turnline/` for the key registry, session pointers and the deployment id,
 * `.turnline-fs/` for the fs store's temp and lock files) and anything the deployment may add
 * start with `.` or `_`. Compared case-insensitively: some filesystems fold case.
 */
const RESERVED_TENANT_FOLDERS: Readonly<Record<string, string>> = {
  [STORE_ROOT_FOLDERS.legacyRunner]:
    "earlier versions kept the embedded runner's workspaces in the data dir's runner folder " +
    '(moved to TURNLINE_RUNNER_ROOT at start, or left there when it cannot be)',
}

/**
 * Why `name` cannot be a tenant although its syntax is valid, or undefined when it can: the one
 * rule every way of naming a tenant applies (TURNLINE_API_KEYS, the key registry and
 * `npm run keys`, TURNLINE_WEBHOOKS) and the store checks again before it builds a key.
 */
export function reservedTenantName(name: string): string | undefined {
  if (name.startsWith('.') || name.startsWith('_')) {
    return `tenant "${name.slice(0, 40)}" is reserved: names starting with "." or "_" are kept for the deployment's own folders and keys`
  }
  const lower = name.toLowerCase()
  const folder = Object.hasOwn(RESERVED_TENANT_FOLDERS, lower) && RESERVED_TENANT_FOLDERS[lower]
  if (folder) {
    return `tenant "${name}" is reserved: ${folder}, beside the tenants' folders; choose another name`
  }
  return undefined
}

/** What is wrong with `name` as a new tenant's name, or undefined when nothing is. */
export function tenantNameProblem(name: string): string | undefined {
  const reserved = reservedTenantName(name)
  if (reserved !== undefined) return reserved
  if (!TENANT_NAME.test(name) || name.includes('..')) {
    return `tenant "${name.slice(0, 40)}" ${TENANT_SYNTAX}`
  }
  return undefined
}

/** A tenant name as written in a registry already stored: its syntax only (see KeyRegistrySchema). */
export const StoredTenantNameSchema = lazySchema(() =>
  z
    .string()
    .regex(TENANT_NAME, TENANT_SYNTAX)
    .refine((name) => !name.includes('..'), TENANT_SYNTAX),
)

/** The name of a tenant being configured: valid syntax and not reserved. */
export const TenantNameSchema = lazySchema(() =>
  z.string().superRefine((name, ctx) => {
    const problem = tenantNameProblem(name)
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
  }),
)

const count = lazySchema(() => z.number().int().min(0).max(Number.MAX_SAFE_INTEGER))

/**
 * Limits of one tenant. An absent field falls back to the deployment default
 * (`TURNLINE_LIMIT_*`); `null` lifts a default for this tenant; absent everywhere = unlimited.
 */
export const TenantLimitsSchema = lazySchema(() =>
  z.strictObject({
    /** Requests per minute over every authenticated /v1 route (sliding window). */
    requests_per_minute: count.min(1).nullable().optional(),
    /** Turn-stepping calls running at once. */
    concurrent_turns: count.min(1).nullable().optional(),
    /** Model tokens (input + output) per UTC day. */
    tokens_per_day: count.min(1).nullable().optional(),
    /** Estimated model cost in USD per UTC day. */
    cost_usd_per_day: z.number().positive().max(1e9).nullable().optional(),
    /** Bytes of tool output kept as output artifacts per UTC day. */
    output_bytes_per_day: count.min(1).nullable().optional(),
    /**
     * Bytes one kept output (or input text) may have: lowers the deployment's
     * `TURNLINE_TOOL_MAX_OUTPUT_BYTES` for this tenant (the lower of the two applies).
     */
    output_bytes_per_output: count.min(1).nullable().optional(),
    /**
     * Bytes one session's output artifacts may hold: lowers the deployment's
     * `TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES` for this tenant (the lower of the two applies).
     */
    output_bytes_per_session: count.min(1).nullable().optional(),
  }),
)
export type TenantLimits = z.infer<typeof TenantLimitsSchema>

/** Limits in force for a tenant after defaults are applied: undefined = unlimited. */
export interface EffectiveLimits {
  requestsPerMinute?: number
  concurrentTurns?: number
  tokensPerDay?: number
  costUsdPerDay?: number
  outputBytesPerDay?: number
  outputBytesPerOutput?: number
  outputBytesPerSession?: number
}

export const RegistryKeySchema = lazySchema(() =>
  z.strictObject({
    /** `sha256:<hex>` of the key. */
    hash: z.string().regex(KEY_HASH, 'must be sha256:<64 lowercase hex digits>'),
    /** Syntax only: an entry naming a reserved tenant is kept as written and refused on load. */
    tenant: StoredTenantNameSchema,
    /** Free text for operators (who holds the key); never the key itself. */
    label: z.string().max(200).optional(),
    created_at: z.iso.datetime().optional(),
  }),
)
export type RegistryKey = z.infer<typeof RegistryKeySchema>

export const KEY_REGISTRY_FORMAT = 'turnline.key_registry'

/** The key registry object (`.turnline/api-keys.json` in the object store), replaced by CAS. */
export const KeyRegistrySchema = lazySchema(() =>
  z
    .strictObject({
      format: z.literal(KEY_REGISTRY_FORMAT),
      version: z.literal(1),
      /** Incremented by every write. */
      revision: z.number().int().min(0),
      updated_at: z.iso.datetime().optional(),
      keys: z.array(RegistryKeySchema).max(100_000),
      /** Per-tenant limits overriding the deployment defaults. */
      tenants: z
        .record(StoredTenantNameSchema, z.strictObject({ limits: TenantLimitsSchema }))
        .default({}),
    })
    .superRefine((registry, ctx) => {
      const seen = new Set<string>()
      for (const [index, key] of registry.keys.entries()) {
        if (seen.has(key.hash)) {
          ctx.addIssue({ code: 'custom', path: ['keys', index], message: 'hash listed twice' })
        }
        seen.add(key.hash)
      }
    }),
)
export type KeyRegistry = z.output<typeof KeyRegistrySchema>

/** An empty registry (what the first write starts from). */
export function emptyKeyRegistry(): KeyRegistry {
  return { format: KEY_REGISTRY_FORMAT, version: 1, revision: 0, keys: [], tenants: {} }
}

const LimitUsageSchema = lazySchema(() =>
  z.object({
    limit: z.number().nullable().describe('The limit; null when none applies.'),
    used: z.number().describe('Used so far.'),
    remaining: z.number().nullable().describe('What is left; null when no limit applies.'),
  }),
)

const QuotaUsageSchema = lazySchema(() =>
  LimitUsageSchema.extend({
    reserved: z
      .number()
      .optional()
      .describe(
        'Held by model calls in flight (their estimates, replaced by their usage once they answer); `remaining` is what neither used nor reserved leaves.',
      ),
  }),
)

/** `GET /v1/usage`: the calling tenant's usage today (UTC) and its limits. */
export const UsageReportSchema = lazySchema(() =>
  z
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
      output_bytes: LimitUsageSchema.describe(
        'Bytes of tool output kept today as output artifacts (answers over the inline limit, kept whole by reference).',
      ),
    })
    .meta({
      id: 'UsageReport',
      description: "The calling tenant's usage today (UTC) and its limits.",
    }),
)
export type UsageReport = z.infer<typeof UsageReportSchema>
