import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { DiskQuota } from '../../adapters/runner/disk-quota.ts'
import { measureWorkspaces } from '../../adapters/runner/disk-usage.ts'
import { PrivateSpoolIndex } from '../../adapters/runner/private-spool-index.ts'

/**
 * The walks of a tenant's workspaces (GNU du, for real): however many workspaces a tenant has,
 * the walk gives a figure, and however many checks come at once, one walk runs at a time.
 */
const root = mkdtempSync(path.join(tmpdir(), 'disk-walks-'))
afterAll(() => rmSync(root, { recursive: true, force: true }), 60_000)

describe('walking a tenant workspaces', () => {
  it('gives a total for more workspaces than fit on a command line', () => {
    const tenant = path.join(root, 'many')
    const workspaces: string[] = []
    // 30 000 names of 100 bytes: 3 MB of arguments, over Linux's 2 MB for a command line.
    for (let i = 0; i < 30_000; i++) {
      const dir = path.join(tenant, `${String(i).padStart(6, '0')}-${'w'.repeat(92 - root.length)}`)
      mkdirSync(dir, { recursive: true })
      workspaces.push(dir)
    }
    writeFileSync(path.join(workspaces[0] ?? '', 'f'), Buffer.alloc(64 * 1024, 1))
    return measureWorkspaces(workspaces, undefined, 60_000).then((measured) => {
      expect(measured.kind).toBe('bytes')
      if (measured.kind === 'bytes') expect(measured.bytes).toBeGreaterThanOrEqual(64 * 1024)
    })
  }, 60_000)

  it('one walk at a time per tenant; after remeasure, a new one', async () => {
    const tenantDir = path.join(root, 't1', 'ws')
    mkdirSync(tenantDir, { recursive: true })
    let walks = 0
    const counted: typeof measureWorkspaces = (workspaces, user, timeoutMs) => {
      walks++
      return measureWorkspaces(workspaces, user, timeoutMs)
    }
    // A check interval of 0: every check wants a fresh figure.
    const spools = new PrivateSpoolIndex(root)
    const quota = new DiskQuota(
      root,
      100,
      0,
      60_000,
      () => {},
      (t) => spools.bytes(t),
      counted,
    )
    await Promise.all(Array.from({ length: 10 }, () => quota.check('t1', undefined)))
    expect(walks).toBe(1)

    const first = quota.check('t1', undefined)
    quota.remeasure('t1')
    const second = quota.check('t1', undefined)
    await Promise.all([first, second])
    expect(walks).toBe(3)
  })
})
