import { TurnlineError } from '../src/contract/errors.ts'
import { toHex } from '../src/shared/sha256-hex.ts'

/**
 * Per-tenant signing secrets for session-defined HTTP tools:
 * `secret(tenant) = hex(HMAC-SHA256(TURNLINE_TOOL_SECRET, tenant))`. A tool receiver given its
 * tenant's secret verifies calls without ever seeing the deployment secret, and tenants cannot
 * forge each other's calls. Tenants come from TURNLINE_API_KEYS (derived once at startup) and
 * from the key registry (derived when a reload first names them, before their keys are
 * accepted), so every lookup is synchronous.
 */
export async function deriveTenantSecret(master: string, tenant: string): Promise<string> {
  const encoder = new TextEncoder()
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(master),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(tenant))
  return toHex(mac)
}

/** A synchronous `secretFor` over secrets derived up front for the given tenants. */
export async function tenantSecrets(
  master: string,
  tenants: readonly string[],
): Promise<(tenant: string) => string> {
  const secrets = new Map<string, string>()
  for (const tenant of tenants) secrets.set(tenant, await deriveTenantSecret(master, tenant))
  return (tenant) => {
    const secret = secrets.get(tenant)
    if (secret === undefined) {
      throw new TurnlineError('internal', `no tool signing secret for tenant ${tenant}`)
    }
    return secret
  }
}

/** A random master secret (256 bits, hex) for deployments that configured none. */
export function randomMasterSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

/**
 * Tenant secrets that grow with the key registry: `add` derives the secrets of tenants seen for
 * the first time (before their keys are accepted), `secretFor` looks them up synchronously.
 */
export class TenantSecretBook {
  readonly #secrets = new Map<string, string>()
  constructor(readonly master: string) {}

  async add(tenants: readonly string[]): Promise<void> {
    for (const tenant of tenants) {
      if (!this.#secrets.has(tenant)) {
        this.#secrets.set(tenant, await deriveTenantSecret(this.master, tenant))
      }
    }
  }

  readonly secretFor = (tenant: string): string => {
    const secret = this.#secrets.get(tenant)
    if (secret === undefined) {
      throw new TurnlineError('internal', `no tool signing secret for tenant ${tenant}`)
    }
    return secret
  }
}
