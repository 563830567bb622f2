import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openCommandNetworks } from '../../adapters/runner/command-networks.ts'
import { openConfinement } from '../../adapters/runner/confinement-probes.ts'
import { PrivateSpoolIndex } from '../../adapters/runner/private-spool-index.ts'
import { SandboxUnavailable } from '../../adapters/runner/sandbox-probe.ts'
import { DEFAULT_SANDBOX_SETTINGS } from '../../adapters/runner/sandbox-settings.ts'

/**
 * A runner's start probes its sandbox, its tenants' limits and its commands' network side by
 * side (adapters/runner/confinement-probes.ts): the egress probe begins with the sandbox as it
 * will be if the sandbox probe's command works. What it finds is what it finds on its own after
 * the sandbox probe, and a refused sandbox leaves no egress proxy behind. Real bubblewrap.
 */
let dir: string
const settings = { ...DEFAULT_SANDBOX_SETTINGS, mode: 'require' as const }
/** The egress proxies' folders of this process (egress-proxy.ts names them by pid). */
const proxyFolders = async () =>
  (await readdir(tmpdir())).filter((name) => name.startsWith(`turnline-proxy-${process.pid}-`))

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-confinement-'))
  // The sandbox user must get through to the root (mkdtemp makes the folder 0700).
  await chmod(dir, 0o711)
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the confinement probes of a runner start', () => {
  it('find the sandbox, and the network the sandbox they found has on its own', async () => {
    const root = join(dir, 'works')
    await mkdir(root)
    const spools = new PrivateSpoolIndex(root)
    const found = await openConfinement({ root, settings, project: false, spools, log: () => {} })
    try {
      expect(found.sandbox.status.isolation).toBe('bwrap')
      const alone = await openCommandNetworks({
        sandbox: found.sandbox,
        rules: settings.egress,
        root,
        log: () => {},
      })
      try {
        expect(await found.networks.status).toEqual(alone.status)
      } finally {
        await alone.close()
      }
    } finally {
      await Promise.all([found.limits.close(), found.networks.close()])
    }
    const left = (await readdir(root)).filter((name) => /^\.(sandbox|egress)-probe/.test(name))
    expect(left).toEqual([])
  })

  it('refuse a sandbox that does not work, and close the egress proxy begun beside its probe', async () => {
    if (process.getuid?.() !== 0) {
      throw new Error('run as root: only a runner running as root drops to another user')
    }
    // A root the sandbox user cannot get to (a private parent): bubblewrap cannot bind it.
    const hidden = join(dir, 'private')
    await mkdir(join(hidden, 'root'), { recursive: true })
    await chmod(hidden, 0o700)
    const before = await proxyFolders()
    const refused = await openConfinement({
      root: join(hidden, 'root'),
      settings,
      project: false,
      spools: new PrivateSpoolIndex(join(hidden, 'root')),
      log: () => {},
    }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(SandboxUnavailable)
    expect(await proxyFolders()).toEqual(before)
  })
})
