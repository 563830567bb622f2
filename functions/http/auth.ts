import { TurnlineError } from '../../src/contract/errors.ts'

/**
 * Bearer-key authentication: `Authorization: Bearer <key>` → tenant. Keys come from
 * `TURNLINE_API_KEYS` (`key=tenant,key2=tenant2`). With no keys the server is single-tenant:
 * every request is tenant `local` (and the Node entry binds to loopback only).
 */
export interface ApiKey {
  key: string
  tenant: string
}

export interface AuthConfig {
  /** Empty: single-tenant mode. */
  keys: readonly ApiKey[]
}

/** Tenant of every request in single-tenant mode. */
export const LOCAL_TENANT = 'local'

/** Shortest accepted key: anything shorter is guessable. */
export const MIN_KEY_LENGTH = 16

const TENANT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/
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
    if (!KEY.test(key)) return `${where}: the key must be printable ASCII without spaces or commas`
    if (key.length < MIN_KEY_LENGTH) {
      return `${where}: the key is shorter than ${MIN_KEY_LENGTH} characters`
    }
    if (!TENANT.test(tenant) || tenant.includes('..')) {
      return `${where}: tenant "${tenant.slice(0, 40)}" must be 1–128 characters from A-Z a-z 0-9 . _ -, not starting with "." or "-", without ".."`
    }
    if (seen.has(key)) return `${where}: the same key is listed twice`
    seen.add(key)
    keys.push({ key, tenant })
  }
  return keys
}

/** Tenants that can ever make a request under this configuration. */
export function tenantsOf(config: AuthConfig): string[] {
  if (config.keys.length === 0) return [LOCAL_TENANT]
  return [...new Set(config.keys.map((k) => k.tenant))]
}

export type Authenticator = (authorization: string | undefined) => Promise<string>

const encoder = new TextEncoder()

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)))
}

/** XOR-accumulating comparison of two equal-length digests: no early exit. */
function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0)
  return diff === 0
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
  if (config.keys.length === 0) return async () => LOCAL_TENANT
  let digests: Promise<{ digest: Uint8Array; tenant: string }[]> | undefined
  const known = () => {
    digests ??= Promise.all(
      config.keys.map(async ({ key, tenant }) => ({ digest: await digest(key), tenant })),
    )
    return digests
  }
  return async (authorization) => {
    if (authorization === undefined || authorization.trim() === '') {
      throw unauthorized('missing Authorization header: send "Authorization: Bearer <api key>"')
    }
    const match = /^Bearer[ ]+([\x21-\x7e]{1,1024})[ ]*$/i.exec(authorization)
    if (!match?.[1]) {
      throw unauthorized('malformed Authorization header: expected "Bearer <api key>"')
    }
    const presented = await digest(match[1])
    let tenant: string | undefined
    for (const entry of await known()) {
      if (sameDigest(entry.digest, presented)) tenant ??= entry.tenant
    }
    if (tenant === undefined) throw unauthorized('invalid API key')
    return tenant
  }
}
