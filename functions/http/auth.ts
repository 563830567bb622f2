import { TurnlineError } from '../../src/contract/errors.ts'
import { tenantNameProblem } from '../../src/contract/tenancy.ts'

/**
 * Bearer-key authentication: `Authorization: Bearer <key>` → tenant. Keys come from
 * `TURNLINE_API_KEYS` (`key=tenant,sha256:<hex>=tenant2`: a key, or the SHA-256 of one) and,
 * when enabled, the key registry in the store (a `KeyLookup`, reloaded without restart). With
 * neither the server is single-tenant: every request is tenant `local` (and the Node entry binds
 * to loopback only).
 */
export type ApiKey = { key: string; tenant: string } | { hash: string; tenant: string }

/** More keys than the configured ones: the key registry (functions/tenancy/key-directory.ts). */
export interface KeyLookup {
  /** The tenant of a presented key's SHA-256 digest, or undefined when no entry has it. */
  tenantOf(digest: Uint8Array): Promise<string | undefined>
}

export interface AuthConfig {
  /** Empty (and no registry): single-tenant mode. */
  keys: readonly ApiKey[]
  registry?: KeyLookup
}

/** True when requests are not authenticated: no keys and no key registry. */
export function isSingleTenant(config: AuthConfig): boolean {
  return config.keys.length === 0 && config.registry === undefined
}

/** `sha256:<64 lowercase hex>`: an entry of TURNLINE_API_KEYS that is a hash, not a key. */
const HASHED = /^sha256:[0-9a-f]{64}$/

/** Tenant of every request in single-tenant mode. */
export const LOCAL_TENANT = 'local'

/** Shortest accepted key: anything shorter is guessable. */
export const MIN_KEY_LENGTH = 16

const KEY = /^[\x21-\x7e]+$/

/**
 * Parses `key=tenant,key2=tenant2`. A key may itself contain `=` (base64 padding): the tenant
 * is what follows the last `=`. Returns the keys, or a message saying what is wrong.
 */
export function parseApiKeys(text: string): ApiKey[] | string {
  const keys: ApiKey[] = []
  const seen = new Set<string>()
  const entries = text.split(',').map((entry) => entry.trim())
  if (entries.every((entry) => entry === '')) return []
  for (const [index, entry] of entries.entries()) {
    const where = `entry ${index + 1}`
    const at = entry.lastIndexOf('=')
    if (at <= 0) return `${where} is not key=tenant`
    const key = entry.slice(0, at)
    const tenant = entry.slice(at + 1)
    const hashed = HASHED.test(key)
    if (/^sha256:/i.test(key) && !hashed) {
      return `${where}: a hashed key is sha256: followed by 64 lowercase hex digits`
    }
    if (!KEY.test(key)) return `${where}: the key must be printable ASCII without spaces or commas`
    if (!hashed && key.length < MIN_KEY_LENGTH) {
      return `${where}: the key is shorter than ${MIN_KEY_LENGTH} characters`
    }
    const problem = tenantNameProblem(tenant)
    if (problem !== undefined) return `${where}: ${problem}`
    if (seen.has(key)) return `${where}: the same key is listed twice`
    seen.add(key)
    keys.push(hashed ? { hash: key, tenant } : { key, tenant })
  }
  return keys
}

/** Tenants of the configured keys (the registry may add more as it reloads). */
export function tenantsOf(config: AuthConfig): string[] {
  if (isSingleTenant(config)) return [LOCAL_TENANT]
  return [...new Set(config.keys.map((k) => k.tenant))]
}

export type Authenticator = (authorization: string | undefined) => Promise<string>

const encoder = new TextEncoder()

/** SHA-256 of a key's UTF-8 bytes. */
export async function keyDigest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)))
}

const digest = keyDigest

/** The digest a `sha256:<hex>` entry names. */
export function hashDigest(hash: string): Uint8Array {
  const hex = hash.slice('sha256:'.length)
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return bytes
}

/** XOR-accumulating comparison of two equal-length digests: no early exit. */
export function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0)
  return diff === 0
}

/** The key of `Authorization: Bearer <key>`, or undefined when the header is not that. */
export function presentedKey(authorization: string): string | undefined {
  return /^Bearer[ ]+([\x21-\x7e]{1,1024})[ ]*$/i.exec(authorization)?.[1]
}

function unauthorized(message: string): TurnlineError {
  return new TurnlineError('unauthorized', message)
}

/**
 * Resolves the tenant of a request. The presented key is hashed and compared with the digest of
 * every configured key (all of them, without early exit), so timing reveals neither which key
 * nor how much of one matched.
 */
export function createAuthenticator(config: AuthConfig): Authenticator {
  if (isSingleTenant(config)) return async () => LOCAL_TENANT
  let digests: Promise<{ digest: Uint8Array; tenant: string }[]> | undefined
  const known = () => {
    digests ??= Promise.all(
      config.keys.map(async (entry) => ({
        digest: 'hash' in entry ? hashDigest(entry.hash) : await digest(entry.key),
        tenant: entry.tenant,
      })),
    )
    return digests
  }
  return async (authorization) => {
    if (authorization === undefined || authorization.trim() === '') {
      throw unauthorized('missing Authorization header: send "Authorization: Bearer <api key>"')
    }
    const key = presentedKey(authorization)
    if (key === undefined) {
      throw unauthorized('malformed Authorization header: expected "Bearer <api key>"')
    }
    const presented = await digest(key)
    let tenant: string | undefined
    for (const entry of await known()) {
      if (sameDigest(entry.digest, presented)) tenant ??= entry.tenant
    }
    tenant ??= await config.registry?.tenantOf(presented)
    if (tenant === undefined) throw unauthorized('invalid API key')
    return tenant
  }
}
