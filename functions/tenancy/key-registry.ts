import { TurnlineError } from '../../src/contract/errors.ts'
import { STORE_ROOT_FOLDERS } from '../../src/contract/store-root-folders.ts'
import {
  emptyKeyRegistry,
  type KeyRegistry,
  KeyRegistrySchema,
  type RegistryKey,
  reservedTenantName,
} from '../../src/contract/tenancy.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { toBase64url } from '../../src/shared/base64.ts'
import { toHex } from '../../src/shared/sha256-hex.ts'
import { keyDigest } from '../http/auth.ts'

/**
 * The key registry object: hashed API keys → tenant, and per-tenant limits. It lives in the
 * object store beside the tenants' folders (a name no tenant can have, so retention sweeps and
 * listings pass it by) and is replaced by compare-and-swap, so two operators editing at once
 * cannot lose each other's change. Plain keys are never written: only `sha256:<hex>`.
 */
export const KEY_REGISTRY_OBJECT = `${STORE_ROOT_FOLDERS.deployment}/api-keys.json`

export interface LoadedRegistry {
  registry: KeyRegistry
  etag: string
}

const decoder = new TextDecoder()
const encoder = new TextEncoder()

/** The registry as stored, or null when none was written yet; an unreadable one is corrupt. */
export async function readKeyRegistry(store: ObjectStore): Promise<LoadedRegistry | null> {
  const stored = await store.get(KEY_REGISTRY_OBJECT)
  if (stored === null) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(stored.body))
  } catch {
    throw unreadable('it is not JSON')
  }
  const result = KeyRegistrySchema.safeParse(parsed)
  if (!result.success) {
    const issue = result.error.issues[0]
    throw unreadable(`${issue?.path.join('.') || 'registry'}: ${issue?.message ?? 'invalid'}`)
  }
  return { registry: result.data, etag: stored.etag }
}

/**
 * Applies `change` to the current registry and writes the result (revision + 1) if nobody wrote
 * in between; on a conflict it re-reads and applies `change` again (a few times).
 */
export async function updateKeyRegistry(
  store: ObjectStore,
  change: (registry: KeyRegistry) => KeyRegistry,
  now: Date = new Date(),
): Promise<KeyRegistry> {
  for (let attempt = 0; ; attempt++) {
    const loaded = await readKeyRegistry(store)
    const base = loaded?.registry ?? emptyKeyRegistry()
    const next = KeyRegistrySchema.parse({
      ...change(structuredClone(base)),
      revision: base.revision + 1,
      updated_at: now.toISOString(),
    })
    const body = encoder.encode(`${JSON.stringify(next, null, 2)}\n`)
    try {
      await store.put(KEY_REGISTRY_OBJECT, body, {
        contentType: 'application/json',
        ...(loaded ? { ifMatch: loaded.etag } : { ifNoneMatch: '*' }),
      })
      return next
    } catch (error) {
      const lost =
        error instanceof TurnlineError && (error.code === 'conflict' || error.code === 'not_found')
      if (!lost || attempt >= 4) throw error
    }
  }
}

/**
 * The registry's keys split by the tenant rule: entries naming a reserved tenant (stored by hand
 * or by an older release, which accepted such names) are refused, with the reason.
 */
export function usableRegistryKeys(registry: KeyRegistry): {
  usable: RegistryKey[]
  refused: { key: RegistryKey; problem: string }[]
} {
  const usable: RegistryKey[] = []
  const refused: { key: RegistryKey; problem: string }[] = []
  for (const key of registry.keys) {
    const problem = reservedTenantName(key.tenant)
    if (problem === undefined) usable.push(key)
    else refused.push({ key, problem })
  }
  return { usable, refused }
}

/** `sha256:<hex>` of a key: what the registry and TURNLINE_API_KEYS hold instead of the key. */
export async function hashApiKey(key: string): Promise<string> {
  const digest = await keyDigest(key)
  return `sha256:${toHex(digest)}`
}

/** A new random API key: `tl_` and 256 random bits in base64url (46 characters). */
export function newApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return `tl_${toBase64url(bytes)}`
}

function unreadable(why: string): TurnlineError {
  return new TurnlineError('corrupt_data', `the key registry cannot be read: ${why}`, {
    logDetails: { key: KEY_REGISTRY_OBJECT },
  })
}
