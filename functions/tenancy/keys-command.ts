import { parseArgs } from 'node:util'
import {
  KEY_HASH,
  type KeyRegistry,
  type TenantLimits,
  TenantLimitsSchema,
  TenantNameSchema,
} from '../../src/contract/tenancy.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import {
  hashApiKey,
  newApiKey,
  readKeyRegistry,
  updateKeyRegistry,
  usableRegistryKeys,
} from './key-registry.ts'

/** The usage text, naming the command as it was invoked (`npm run keys --`, `node dist/node/keys.mjs`). */
const keysUsage = (invoked: string) => `usage: ${invoked} <command>

  add <tenant> [--label TEXT]        make a new key for the tenant; prints it once (only its
                                     SHA-256 is stored)
  add <tenant> --hash sha256:<hex>   register the hash of a key made elsewhere
  revoke <sha256:<hex>>              remove one key
  revoke --tenant <tenant>           remove every key of a tenant
  list                               keys (hashes), tenants, labels and limits
  limits <tenant> [--requests-per-minute N] [--concurrent-turns N]
                  [--tokens-per-day N] [--cost-usd-per-day USD]
                  [--output-bytes-per-day N] [--output-bytes-per-output N]
                  [--output-bytes-per-session N]
                                     set a tenant's limits; a value of "default" falls back to
                                     TURNLINE_LIMIT_*, "none" lifts the limit for this tenant
                                     (the per-output and per-session caps only lower the
                                     deployment's TURNLINE_TOOL_MAX_*OUTPUT_BYTES)
  hash                               read a key on stdin, print its sha256:<hex>

The registry is ${'`.turnline/api-keys.json`'} in the configured store (TURNLINE_STORE, S3_BUCKET, …);
servers with TURNLINE_KEY_REGISTRY=1 pick changes up within TURNLINE_KEY_RELOAD_SECONDS.`

export interface KeysIo {
  out: (line: string) => void
  err: (line: string) => void
  /** All of stdin (for `hash`). */
  stdin: () => Promise<string>
  /** How the user invoked the command, for its usage text (default `npm run keys --`). */
  invoked?: string
}

const LIMIT_OPTIONS = {
  'requests-per-minute': 'requests_per_minute',
  'concurrent-turns': 'concurrent_turns',
  'tokens-per-day': 'tokens_per_day',
  'cost-usd-per-day': 'cost_usd_per_day',
  'output-bytes-per-day': 'output_bytes_per_day',
  'output-bytes-per-output': 'output_bytes_per_output',
  'output-bytes-per-session': 'output_bytes_per_session',
} as const

const NPM_SCRIPT = 'npm run keys --'

class UsageError extends Error {}

/** Runs one `keys` command against the store; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function runKeysCommand(
  argv: readonly string[],
  store: () => ObjectStore,
  io: KeysIo,
): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        label: { type: 'string' },
        hash: { type: 'string' },
        tenant: { type: 'string' },
        ...Object.fromEntries(Object.keys(LIMIT_OPTIONS).map((name) => [name, { type: 'string' }])),
      },
    })
    const [command, subject, ...extra] = positionals
    if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`)
    switch (command) {
      case 'add': {
        const tenant = tenantName(subject)
        const given = values.hash
        if (given !== undefined && !KEY_HASH.test(given)) {
          throw new UsageError('--hash must be sha256: followed by 64 lowercase hex digits')
        }
        const key = given === undefined ? newApiKey() : undefined
        const hash = given ?? (await hashApiKey(key ?? ''))
        const label = typeof values.label === 'string' ? values.label.slice(0, 200) : undefined
        await updateKeyRegistry(store(), (registry) => {
          if (registry.keys.some((k) => k.hash === hash)) {
            throw new UsageError('this key is registered already')
          }
          registry.keys.push({
            hash,
            tenant,
            ...(label ? { label } : {}),
            created_at: new Date().toISOString(),
          })
          return registry
        })
        if (key !== undefined) {
          io.err(`key for tenant ${tenant} (shown once; only its hash ${hash} is stored):`)
          io.out(key)
        } else {
          io.out(`registered ${hash} for tenant ${tenant}`)
        }
        return 0
      }
      case 'revoke': {
        const byTenant = values.tenant
        if ((subject === undefined) === (byTenant === undefined)) {
          throw new UsageError('revoke takes a sha256:<hex> hash or --tenant <tenant>')
        }
        if (subject !== undefined && !KEY_HASH.test(subject)) {
          throw new UsageError(
            `revoke takes the key hash (sha256:<hex>; see \`${io.invoked ?? NPM_SCRIPT} hash\`)`,
          )
        }
        let removed = 0
        await updateKeyRegistry(store(), (registry) => {
          const kept = registry.keys.filter((k) =>
            byTenant === undefined ? k.hash !== subject : k.tenant !== byTenant,
          )
          removed = registry.keys.length - kept.length
          if (removed === 0) throw new UsageError('no such key in the registry')
          return { ...registry, keys: kept }
        })
        io.out(`revoked ${removed} key${removed === 1 ? '' : 's'}`)
        return 0
      }
      case 'list': {
        const loaded = await readKeyRegistry(store())
        const shown = listing(loaded?.registry)
        io.out(JSON.stringify(shown, null, 2))
        for (const { hash, problem } of shown.refused) {
          io.err(`turnline keys: ${hash} is refused by the server (${problem}); revoke it`)
        }
        return 0
      }
      case 'limits': {
        const tenant = tenantName(subject)
        const change = limitChange(values)
        const next = await updateKeyRegistry(store(), (registry) => {
          const limits: TenantLimits = { ...registry.tenants[tenant]?.limits, ...change }
          for (const [name, value] of Object.entries(limits)) {
            if (value === undefined) delete limits[name as keyof TenantLimits]
          }
          const tenants = { ...registry.tenants }
          if (Object.keys(limits).length === 0) delete tenants[tenant]
          else tenants[tenant] = { limits: TenantLimitsSchema.parse(limits) }
          return { ...registry, tenants }
        })
        io.out(JSON.stringify({ tenant, limits: next.tenants[tenant]?.limits ?? {} }))
        return 0
      }
      case 'hash': {
        const key = (await io.stdin()).replace(/\r?\n$/, '')
        if (key === '') throw new UsageError('hash reads the key on stdin')
        io.out(await hashApiKey(key))
        return 0
      }
      default:
        throw new UsageError(command === undefined ? 'no command' : `unknown command ${command}`)
    }
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error)) {
      io.err(`turnline keys: ${error.message}\n\n${keysUsage(io.invoked ?? NPM_SCRIPT)}`)
      return 2
    }
    io.err(`turnline keys: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  }
}

function tenantName(value: string | undefined): string {
  const parsed = TenantNameSchema.safeParse(value)
  if (!parsed.success) {
    throw new UsageError(
      value === undefined ? 'tenant: missing' : (parsed.error.issues[0]?.message ?? 'tenant'),
    )
  }
  return parsed.data
}

function limitChange(values: Record<string, unknown>): TenantLimits {
  const change: Record<string, number | null | undefined> = {}
  for (const [option, field] of Object.entries(LIMIT_OPTIONS)) {
    const raw = values[option]
    if (typeof raw !== 'string') continue
    if (raw === 'default') change[field] = undefined
    else if (raw === 'none') change[field] = null
    else if (/^\d+(\.\d+)?$/.test(raw)) change[field] = Number(raw)
    else throw new UsageError(`--${option}: a number, "default" or "none"`)
  }
  if (Object.keys(change).length === 0) throw new UsageError('limits: name at least one limit')
  const parsed = TenantLimitsSchema.safeParse(
    Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)),
  )
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new UsageError(`--${String(issue?.path[0]).replaceAll('_', '-')}: ${issue?.message}`)
  }
  return { ...change, ...parsed.data } as TenantLimits
}

function listing(registry: KeyRegistry | undefined) {
  const refused = registry ? usableRegistryKeys(registry).refused : []
  return {
    revision: registry?.revision ?? 0,
    updated_at: registry?.updated_at ?? null,
    keys: registry?.keys ?? [],
    tenants: registry?.tenants ?? {},
    /** Entries whose tenant name is reserved: kept as stored, never loaded by a server. */
    refused: refused.map(({ key, problem }) => ({ hash: key.hash, tenant: key.tenant, problem })),
  }
}
