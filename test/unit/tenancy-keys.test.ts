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
import { limitsOf, type Tenancy } from '../../functions/tenancy/tenancy.ts'
import { deriveTenantSecret, TenantSecretBook } from '../../functions/tool-secrets.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { keysCli } from '../support/keys-cli.ts'

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

/** A promise that resolves when `open` is called. */
function latch(): { wait: Promise<void>; open: () => void } {
  let open = () => {}
  const wait = new Promise<void>((resolve) => {
    open = resolve
  })
  return { wait, open }
}

function directoryOn(store: ObjectStore, clock: ManualClock, reloadMs = 30_000) {
  return new KeyDirectory({ store, reloadMs, missReloadMs: 5_000, clock })
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

    const cli = keysCli(counting.store, KEY)
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
    const cli = keysCli(store, KEY)
    expect(await cli.run('add', 'newcomer')).toBe(0)
    expect(await authenticate(bearer(cli.out.at(-1) ?? ''))).toBe('newcomer')
    expect(secrets.secretFor('newcomer')).toBe(
      await deriveTenantSecret('master-secret-0123456789', 'newcomer'),
    )
  })

  it('a request arriving while the first read is under way waits for it: never a 401', async () => {
    const store = new MemoryObjectStore()
    const hash = await hashApiKey(KEY)
    await updateKeyRegistry(store, (r) => ({ ...r, keys: [{ hash, tenant: 'acme' }] }))
    const { wait: gate, open } = latch()
    const { wait: deriving, open: reached } = latch()
    const directory = new KeyDirectory({
      store,
      reloadMs: 30_000,
      missReloadMs: 5_000,
      clock: new ManualClock(),
      // The registry is read; its tenants' secrets are still being derived.
      onTenants: async () => {
        reached()
        await gate
      },
    })
    // Asking the registry joins the read under way before it yields: once the second request
    // has asked, it waits for that read.
    let asked = 0
    const { wait: secondAsked, open: askedTwice } = latch()
    const registry = {
      tenantOf: (digest: Uint8Array) => {
        const tenant = directory.tenantOf(digest)
        if (++asked === 2) askedTwice()
        return tenant
      },
    }
    const authenticate = createAuthenticator({ keys: [], registry })
    const first = authenticate(bearer(KEY))
    await deriving
    // The second request reaches the registry while the first read is not done yet.
    const second = authenticate(bearer(KEY)).catch((error: unknown) => error)
    await secondAsked
    open()
    expect(await first).toBe('acme')
    expect(await second).toBe('acme')
  })

  it('a first read that does not end in time is a retryable 503, and the read goes on', async () => {
    const memory = new MemoryObjectStore()
    const hash = await hashApiKey(KEY)
    await updateKeyRegistry(memory, (r) => ({ ...r, keys: [{ hash, tenant: 'acme' }] }))
    const { wait: gate, open } = latch()
    const slow: ObjectStore = {
      get: async (key) => {
        await gate
        return memory.get(key)
      },
      put: (key, body, options) => memory.put(key, body, options),
      list: (prefix, options) => memory.list(prefix, options),
      delete: (key) => memory.delete(key),
    }
    const directory = new KeyDirectory({
      store: slow,
      reloadMs: 30_000,
      missReloadMs: 5_000,
      firstReadWaitMs: 50,
      clock: new ManualClock(),
    })
    const authenticate = createAuthenticator({ keys: [], registry: directory })
    const refused = await authenticate(bearer(KEY)).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(TurnlineError)
    expect(refused).toMatchObject({ code: 'storage_unavailable', retryable: true, retryAfter: 1 })
    open()
    expect(await authenticate(bearer(KEY))).toBe('acme')
  })

  it('an unreadable registry is corrupt_data, never an empty one', async () => {
    const store = new MemoryObjectStore()
    await store.put(KEY_REGISTRY_OBJECT, new TextEncoder().encode('{"format":"x"}'))
    expect(await rejected(readKeyRegistry(store))).toBe('corrupt_data')
  })

  it('sets per-tenant limits that override the defaults, null lifting one', async () => {
    const store = new MemoryObjectStore()
    const cli = keysCli(store, KEY)
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
    const cli = keysCli(store, KEY)
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
