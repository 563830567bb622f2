import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { createAuthenticator, parseApiKeys } from '../../functions/http/auth.ts'
import { KeyDirectory } from '../../functions/tenancy/key-directory.ts'
import {
  hashApiKey,
  KEY_REGISTRY_OBJECT,
  readKeyRegistry,
  updateKeyRegistry,
} from '../../functions/tenancy/key-registry.ts'
import { runKeysCommand } from '../../functions/tenancy/keys-command.ts'
import { limitsOf, type Tenancy } from '../../functions/tenancy/tenancy.ts'
import { deriveTenantSecret, TenantSecretBook } from '../../functions/tool-secrets.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'

const KEY = 'plain-key-0123456789abcdef'
const bearer = (key: string) => `Bearer ${key}`

class ManualClock {
  time = Date.UTC(2026, 0, 1, 12)
  now = () => this.time
}

async function rejected(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    return error instanceof TurnlineError ? error.code : String(error)
  }
  return 'resolved'
}

function directoryOn(store: ObjectStore, clock: ManualClock, reloadMs = 30_000) {
  return new KeyDirectory({ store, reloadMs, missReloadMs: 5_000, clock })
}

function keysCli(store: ObjectStore) {
  const out: string[] = []
  const err: string[] = []
  const run = (...argv: string[]) =>
    runKeysCommand(argv, () => store, {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      stdin: async () => `${KEY}\n`,
    })
  return { run, out, err }
}

describe('hashed keys in TURNLINE_API_KEYS', () => {
  it('accepts sha256:<hex>=tenant beside plain keys, and checks the hash form', async () => {
    const hash = await hashApiKey(KEY)
    expect(hash).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(parseApiKeys(`${hash}=acme,other-key-0123456789=beta`)).toEqual([
      { hash, tenant: 'acme' },
      { key: 'other-key-0123456789', tenant: 'beta' },
    ])
    expect(parseApiKeys('sha256:abc=acme')).toMatch(/64 lowercase hex/)
    expect(parseApiKeys(`${hash.toUpperCase()}=acme`)).toMatch(/64 lowercase hex/)

    const authenticate = createAuthenticator({ keys: [{ hash, tenant: 'acme' }] })
    expect(await authenticate(bearer(KEY))).toBe('acme')
    // The hash itself is not a key.
    expect(await rejected(authenticate(bearer(hash)))).toBe('unauthorized')
    expect(await rejected(authenticate(bearer(`${KEY}x`)))).toBe('unauthorized')
  })
})

describe('the key registry', () => {
  it('a key added works without restart, a revoked one stops within the reload interval', async () => {
    const counting = countingObjectStore(new MemoryObjectStore())
    const clock = new ManualClock()
    const directory = directoryOn(counting.store, clock)
    const authenticate = createAuthenticator({ keys: [], registry: directory })
    expect(await rejected(authenticate(bearer(KEY)))).toBe('unauthorized')

    const cli = keysCli(counting.store)
    expect(await cli.run('add', 'acme', '--label', 'ci')).toBe(0)
    const issued = cli.out.at(-1) ?? ''
    expect(issued).toMatch(/^tl_[A-Za-z0-9_-]{43}$/)
    // Only the hash is stored.
    const stored = new TextDecoder().decode((await counting.store.get(KEY_REGISTRY_OBJECT))?.body)
    expect(stored).not.toContain(issued)
    expect(stored).toContain(await hashApiKey(issued))

    // Unknown keys re-read the registry at most every 5 s.
    expect(await rejected(authenticate(bearer(issued)))).toBe('unauthorized')
    clock.time += 5_000
    counting.reset()
    expect(await authenticate(bearer(issued))).toBe('acme')
    expect(counting.counts.get).toBe(1)
    for (let i = 0; i < 20; i++) {
      expect(await rejected(authenticate(bearer(`unknown-key-${i}-0123456789`)))).toBe(
        'unauthorized',
      )
    }
    expect(counting.counts.get).toBe(1)

    expect(await cli.run('revoke', '--tenant', 'acme')).toBe(0)
    clock.time += 29_000
    expect(await authenticate(bearer(issued))).toBe('acme')
    clock.time += 1_000
    expect(await rejected(authenticate(bearer(issued)))).toBe('unauthorized')
  })

  it('re-reads only the etag when nothing changed, and keeps the last good copy on failure', async () => {
    const memory = new MemoryObjectStore()
    let failing = false
    const flaky: ObjectStore = {
      get: (key) => {
        if (failing) throw new TurnlineError('storage_unavailable', 'down')
        return memory.get(key)
      },
      put: (key, body, options) => memory.put(key, body, options),
      list: (prefix, options) => memory.list(prefix, options),
      delete: (key) => memory.delete(key),
    }
    const hash = await hashApiKey(KEY)
    await updateKeyRegistry(memory, (r) => ({ ...r, keys: [{ hash, tenant: 'acme' }] }))
    const clock = new ManualClock()
    const logs: Record<string, unknown>[] = []
    const directory = new KeyDirectory({
      store: flaky,
      reloadMs: 1_000,
      missReloadMs: 1_000,
      clock,
      log: (entry) => logs.push(entry),
    })
    const authenticate = createAuthenticator({ keys: [], registry: directory })
    expect(await authenticate(bearer(KEY))).toBe('acme')
    failing = true
    clock.time += 2_000
    expect(await authenticate(bearer(KEY))).toBe('acme')
    expect(logs.some((entry) => entry.level === 'error')).toBe(true)
    expect(JSON.stringify(logs)).not.toContain(KEY)

    // With no good copy at all, the request fails instead of guessing.
    const fresh = new KeyDirectory({ store: flaky, reloadMs: 1_000, missReloadMs: 1_000, clock })
    expect(await rejected(fresh.tenantOf(new Uint8Array(32)))).toBe('storage_unavailable')
  })

  it('derives the tool signing secret of a registry tenant before its key is accepted', async () => {
    const store = new MemoryObjectStore()
    const secrets = new TenantSecretBook('master-secret-0123456789')
    const clock = new ManualClock()
    const directory = new KeyDirectory({
      store,
      reloadMs: 1_000,
      missReloadMs: 1_000,
      clock,
      onTenants: (tenants) => secrets.add(tenants),
    })
    const authenticate = createAuthenticator({ keys: [], registry: directory })
    expect(() => secrets.secretFor('newcomer')).toThrow(/no tool signing secret/)
    await updateKeyRegistry(store, (r) => ({ ...r, keys: [] }))
    const cli = keysCli(store)
    expect(await cli.run('add', 'newcomer')).toBe(0)
    expect(await authenticate(bearer(cli.out.at(-1) ?? ''))).toBe('newcomer')
    expect(secrets.secretFor('newcomer')).toBe(
      await deriveTenantSecret('master-secret-0123456789', 'newcomer'),
    )
  })

  it('an unreadable registry is corrupt_data, never an empty one', async () => {
    const store = new MemoryObjectStore()
    await store.put(KEY_REGISTRY_OBJECT, new TextEncoder().encode('{"format":"x"}'))
    expect(await rejected(readKeyRegistry(store))).toBe('corrupt_data')
  })

  it('sets per-tenant limits that override the defaults, null lifting one', async () => {
    const store = new MemoryObjectStore()
    const cli = keysCli(store)
    expect(
      await cli.run('limits', 'acme', '--requests-per-minute', '5', '--tokens-per-day', 'none'),
    ).toBe(0)
    expect(await cli.run('limits', 'acme', '--concurrent-turns', '0')).toBe(2)
    expect(await cli.run('limits', 'acme', '--cost-usd-per-day', 'lots')).toBe(2)
    const clock = new ManualClock()
    const directory = directoryOn(store, clock)
    await directory.reload()
    const tenancy: Tenancy = {
      limiter: new MemoryTenantLimiter(),
      defaults: { requestsPerMinute: 100, tokensPerDay: 1000, costUsdPerDay: 2 },
      overrides: (tenant) => directory.limitsFor(tenant),
      slotTtlMs: 60_000,
      reservationTtlMs: 900_000,
      defaultOutputTokens: 4096,
      clock,
    }
    expect(limitsOf(tenancy, 'acme')).toEqual({ requestsPerMinute: 5, costUsdPerDay: 2 })
    expect(limitsOf(tenancy, 'beta')).toEqual(tenancy.defaults)

    expect(await cli.run('limits', 'acme', '--requests-per-minute', 'default')).toBe(0)
    clock.time += 30_000
    await directory.tenantOf(new Uint8Array(32))
    expect(limitsOf(tenancy, 'acme')).toEqual({ requestsPerMinute: 100, costUsdPerDay: 2 })
  })

  it('the CLI refuses what would break the registry', async () => {
    const store = new MemoryObjectStore()
    const cli = keysCli(store)
    const hash = await hashApiKey(KEY)
    expect(await cli.run('add', 'acme', '--hash', hash)).toBe(0)
    expect(await cli.run('add', 'beta', '--hash', hash)).toBe(2)
    expect(await cli.run('add', '../etc')).toBe(2)
    expect(await cli.run('revoke', KEY)).toBe(2)
    expect(await cli.run('revoke', `sha256:${'0'.repeat(64)}`)).toBe(2)
    expect(await cli.run('hash')).toBe(0)
    expect(cli.out.at(-1)).toBe(hash)
    expect(await cli.run('revoke', hash)).toBe(0)
    expect((await readKeyRegistry(store))?.registry).toMatchObject({ revision: 2, keys: [] })
  })
})
