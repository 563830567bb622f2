import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CommandSandbox } from '../../adapters/runner/command-sandbox.ts'
import { PrivateSpoolIndex } from '../../adapters/runner/private-spool-index.ts'
import { openSandbox } from '../../adapters/runner/sandbox-probe.ts'
import { DEFAULT_SANDBOX_SETTINGS } from '../../adapters/runner/sandbox-settings.ts'
import { TenantLimitEnforcer } from '../../adapters/runner/tenant-limit-enforcer.ts'

/**
 * A single-tenant runner sets its tenant up once it listens (TenantLimitEnforcer.prepare), so
 * that the tenant's first request does not pay for its uid and cgroups. A request that comes
 * before the setup has ended joins it; one that comes first makes it, and the setup joins that:
 * one setup either way. Real bubblewrap, uids and cgroups (a root runner).
 */
let dir: string
let limits: TenantLimitEnforcer
const logged: Record<string, unknown>[] = []
const uidsDir = () => join(dir, '.runner-state', 'tenant-uids')

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('run as root: tenant uids need a root runner')
  dir = await mkdtemp(join(tmpdir(), 'turnline-tenant-prepare-'))
  await chmod(dir, 0o711)
  const settings = { ...DEFAULT_SANDBOX_SETTINGS, mode: 'require' as const }
  const sandbox = await openSandbox(settings, dir)
  const spools = new PrivateSpoolIndex(dir)
  limits = await TenantLimitEnforcer.open(dir, sandbox, (entry) => logged.push(entry), spools)
})

afterAll(async () => {
  await limits?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** The uids claimed for `tenant` (`uid-<n>` files naming it) and its record's uid. */
async function uidsOf(tenant: string): Promise<{ claims: number; uid: number | undefined }> {
  const names = await readdir(uidsDir()).catch(() => [] as string[])
  let claims = 0
  for (const name of names.filter((n) => n.startsWith('uid-'))) {
    if ((await readFile(join(uidsDir(), name), 'utf8')) === tenant) claims += 1
  }
  const record = await readFile(join(uidsDir(), `${tenant}.json`), 'utf8').catch(() => undefined)
  return { claims, uid: record === undefined ? undefined : JSON.parse(record).uid }
}

/** The same sandbox each time, one uid claimed, the sandbox's user that uid. */
async function expectOneSetup(tenant: string, first: CommandSandbox, second: CommandSandbox) {
  expect(second).toBe(first)
  expect(await limits.sandboxFor(tenant)).toBe(first)
  const { claims, uid } = await uidsOf(tenant)
  expect(claims).toBe(1)
  expect(first.fileOwner?.uid).toBe(uid)
}

describe('a tenant set up ahead of its first request', () => {
  it('has its uid before any request, and its first request gets that very setup', async () => {
    expect(await uidsOf('ahead')).toEqual({ claims: 0, uid: undefined })
    await limits.prepare(['ahead'], () => {})
    const prepared = await uidsOf('ahead')
    expect(prepared.claims).toBe(1)
    expect(prepared.uid).toBeGreaterThanOrEqual(1_000_000_000)
    const sandbox = await limits.sandboxFor('ahead')
    expect(sandbox.fileOwner?.uid).toBe(prepared.uid)
    expect(await uidsOf('ahead')).toEqual(prepared)
  })

  it('is one setup when its first request comes while it runs', async () => {
    const preparing = limits.prepare(['during'], () => {})
    const [first, second] = await Promise.all([
      limits.sandboxFor('during'),
      limits.sandboxFor('during'),
      preparing,
    ])
    await expectOneSetup('during', first, second)
  })

  it('is one setup when its first request came before it', async () => {
    const first = limits.sandboxFor('before')
    await limits.prepare(['before'], () => {})
    await expectOneSetup('before', await first, await limits.sandboxFor('before'))
  })

  it('logs a setup that fails, and leaves it to the first request', async () => {
    const failures: Record<string, unknown>[] = []
    await limits.prepare(['../outside', 'fine'], (entry) => failures.push(entry))
    expect(failures).toEqual([
      expect.objectContaining({ event: 'tenant_prepare_failed', tenant: '../outside' }),
    ])
    expect((await uidsOf('fine')).claims).toBe(1)
  })
})
