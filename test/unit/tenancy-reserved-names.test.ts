import { describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { createDeps } from '../../functions/deps.ts'
import { ConfigError } from '../../functions/env-config.ts'
import { createAuthenticator, parseApiKeys } from '../../functions/http/auth.ts'
import { KeyDirectory } from '../../functions/tenancy/key-directory.ts'
import {
  hashApiKey,
  KEY_REGISTRY_OBJECT,
  readKeyRegistry,
} from '../../functions/tenancy/key-registry.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { reservedTenantName, tenantNameProblem } from '../../src/contract/tenancy.ts'
import { sweepRetention } from '../../src/store/retention-sweep.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { keysCli } from '../support/keys-cli.ts'
import { threadCompleted, threadStarted } from '../support/sample-events.ts'

/**
 * Tenant names that would collide with the deployment's own folders or key parts (the embedded
 * runner's `runner` folder in the data dir, names starting with `.` or `_`) are refused by every
 * way of naming a tenant, with the rule's message.
 */
const KEY = 'plain-key-0123456789abcdef'
const RESERVED = ['runner', 'Runner', 'RUNNER', '_runner', '_x', '.turnline', '.turnline-fs']

async function configProblems(env: Record<string, string>): Promise<string> {
  const error = await createDeps(env, {
    defaultStore: (root) => new FsObjectStore({ root }),
  }).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ConfigError)
  return (error as ConfigError).message
}

describe('the reserved tenant rule', () => {
  it('refuses the runner folder (any case) and names starting with . or _, keeps the others', () => {
    for (const name of RESERVED) expect(tenantNameProblem(name)).toMatch(/is reserved/)
    expect(reservedTenantName('runner')).toMatch(/embedded runner's workspaces/)
    for (const name of ['acme', 'runners', 'my-runner', 'local', 'constructor', 'a_b', 'a.b']) {
      expect(tenantNameProblem(name)).toBeUndefined()
    }
    expect(tenantNameProblem('a/b')).toMatch(/1–128 characters/)
    expect(tenantNameProblem('../etc')).toMatch(/reserved/)
  })
})

describe('every way of naming a tenant refuses a reserved name', () => {
  it('TURNLINE_API_KEYS, with plain and hashed keys: the server does not start', async () => {
    const hash = await hashApiKey(KEY)
    expect(parseApiKeys(`${KEY}=runner`)).toMatch(/entry 1: tenant "runner" is reserved/)
    expect(parseApiKeys(`${KEY}=acme,${hash}=runner`)).toMatch(/entry 2: tenant "runner"/)
    expect(parseApiKeys(`${hash}=_internal`)).toMatch(/starting with "\." or "_"/)
    expect(parseApiKeys(`${KEY}=Runner`)).toMatch(/is reserved/)
    expect(await configProblems({ TURNLINE_API_KEYS: `${KEY}=runner` })).toMatch(
      /TURNLINE_API_KEYS: .*tenant "runner" is reserved/,
    )
    expect(await configProblems({ TURNLINE_API_KEYS: `${hash}=runner` })).toMatch(/is reserved/)
  })

  it('TURNLINE_WEBHOOKS: a webhook cannot run as a reserved tenant', async () => {
    const webhooks = JSON.stringify({
      deploy: { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', tenant: 'runner' },
    })
    expect(await configProblems({ TURNLINE_WEBHOOKS: webhooks })).toMatch(
      /TURNLINE_WEBHOOKS.*tenant "runner" is reserved/s,
    )
  })

  it('npm run keys: add and limits refuse it, with the rule in the message', async () => {
    const store = new MemoryObjectStore()
    const cli = keysCli(store, KEY)
    for (const name of RESERVED) {
      expect(await cli.run('add', name)).toBe(2)
      expect(cli.err.at(-1)).toMatch(/is reserved/)
    }
    expect(await cli.run('add', 'runner', '--hash', await hashApiKey(KEY))).toBe(2)
    expect(await cli.run('limits', 'runner', '--concurrent-turns', '2')).toBe(2)
    expect(cli.err.at(-1)).toMatch(/tenant "runner" is reserved/)
    expect(await readKeyRegistry(store)).toBeNull()
  })

  it('a registry entry naming a reserved tenant is refused loudly on every load, never used', async () => {
    const store = new MemoryObjectStore()
    const cli = keysCli(store, KEY)
    expect(await cli.run('add', 'acme', '--hash', await hashApiKey('acme-key-0123456789abc'))).toBe(
      0,
    )
    // Written by hand (or by a release that accepted the name), beside a valid entry.
    const stored = await readKeyRegistry(store)
    const registry = structuredClone(stored?.registry)
    registry?.keys.push({ hash: await hashApiKey(KEY), tenant: 'runner' })
    await store.put(KEY_REGISTRY_OBJECT, new TextEncoder().encode(JSON.stringify(registry)))

    const log: Record<string, unknown>[] = []
    const directory = new KeyDirectory({
      store,
      reloadMs: 30_000,
      missReloadMs: 5_000,
      log: (entry) => log.push(entry),
    })
    const authenticate = createAuthenticator({ keys: [], registry: directory })
    await expect(authenticate(`Bearer ${KEY}`)).rejects.toMatchObject({ code: 'unauthorized' })
    expect(await authenticate('Bearer acme-key-0123456789abc')).toBe('acme')
    expect(log).toContainEqual(
      expect.objectContaining({
        level: 'error',
        tenant: 'runner',
        error: expect.stringMatching(/is reserved/),
      }),
    )

    // The keys command shows it as refused, and it can still be revoked.
    expect(await cli.run('list')).toBe(0)
    expect(JSON.parse(cli.out.at(-1) ?? '{}').refused).toEqual([
      expect.objectContaining({ tenant: 'runner', problem: expect.stringMatching(/reserved/) }),
    ])
    expect(cli.err.at(-1)).toMatch(/is refused by the server .*revoke it/)
    expect(await cli.run('revoke', '--tenant', 'runner')).toBe(0)
    expect((await readKeyRegistry(store))?.registry.keys.map((k) => k.tenant)).toEqual(['acme'])
  })
})

describe('the store refuses a reserved tenant too', () => {
  it('builds no key for it, and the retention sweep leaves its folder alone', async () => {
    const store = new MemoryObjectStore()
    const start = Date.parse('2026-01-01T00:00:00Z')
    const sessions = new SessionStore({ store, clock: { now: () => start } })
    const ref = { tenant: 'runner', workspace: 'w', sessionId: 's1' }
    const error = await sessions.create(ref, 's1', { events: [threadStarted('s1')] }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(TurnlineError)
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/runner/) })
    expect(() => sessions.tenantRoot('_x')).toThrow(/reserved/)

    // A folder a tenant command could fill with what looks like closed sessions.
    const planted = new SessionStore({ store, clock: { now: () => start } })
    const acme = { tenant: 'acme', workspace: 'w', sessionId: 'old' }
    await planted.create(acme, 'old', { events: [threadStarted('old')] })
    await planted.commit(await planted.open(acme), { events: [threadCompleted('old', 0)] })
    for (const { key } of (await store.list('acme/')).objects) {
      const got = await store.get(key)
      if (got) await store.put(`runner/${key.slice('acme/'.length)}`, got.body)
    }
    const result = await sweepRetention(store, { now: start + 40 * 86_400_000 })
    expect(result.deleted).toEqual([{ tenant: 'acme', workspace: 'w', sessions: ['old'] }])
    expect((await store.list('runner/w/.vtcode/sessions/old/log/')).objects).not.toHaveLength(0)
  })
})
