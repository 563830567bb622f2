import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { confineLaunch } from '../../adapters/runner/tenant-launch.ts'
import { TenantUidRecordSchema, TenantUids } from '../../adapters/runner/tenant-uids.ts'

describe('tenant uids', () => {
  it('the stored record (version 1) still parses', () => {
    const text = readFileSync(new URL('../fixtures/runner/tenant-uid-v1.json', import.meta.url))
    expect(TenantUidRecordSchema.parse(JSON.parse(text.toString('utf8')))).toEqual({
      version: 1,
      tenant: 'acme',
      uid: 1000123456,
    })
  })

  it('one uid per tenant, distinct, kept across instances (a restarted runner)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnline-uids-'))
    try {
      const range = { first: 5000, last: 5002 }
      const uids = new TenantUids(dir, range)
      const [a, b, c, again] = await Promise.all([
        uids.uidOf('a'),
        uids.uidOf('b'),
        new TenantUids(dir, range).uidOf('c'),
        uids.uidOf('a'),
      ])
      expect(new Set([a, b, c])).toEqual(new Set([5000, 5001, 5002]))
      expect(again).toBe(a)
      expect(await new TenantUids(dir, range).uidOf('b')).toBe(b)
      await expect(uids.uidOf('d')).rejects.toThrow(
        /no free uid left in TURNLINE_SANDBOX_TENANT_UIDS/,
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('a confined launch', () => {
  const launch = {
    file: '/usr/bin/bwrap',
    args: ['--unshare-all', '--', 'sh', '-c', 'true'],
    env: {},
    uid: 7000,
    gid: 7000,
    inputs: [],
    groupDepth: 1,
    commandDepth: 2,
  }
  const tools = { prlimit: '/usr/bin/prlimit', setpriv: '/usr/bin/setpriv' }

  it("joins the tenant's cgroups as root, then drops to its uid with its process limit", () => {
    const confined = confineLaunch(launch, {
      cgroupProcs: ['/cg/pids/t-acme/cgroup.procs'],
      processes: 64,
      ...tools,
    })
    expect(confined.uid).toBeUndefined()
    expect(confined.file).toBe('/bin/sh')
    expect(confined.args.slice(3)).toEqual([
      '/cg/pids/t-acme/cgroup.procs',
      '--',
      '/usr/bin/prlimit',
      '--nproc=64:',
      '--',
      '/usr/bin/setpriv',
      '--reuid=7000',
      '--regid=7000',
      '--clear-groups',
      '--',
      '/usr/bin/bwrap',
      ...launch.args,
    ])
  })

  it('without cgroups: the spawn drops to the uid, prlimit sets the limit; depths unchanged', () => {
    const confined = confineLaunch(launch, { cgroupProcs: [], processes: 64, ...tools })
    expect(confined).toMatchObject({ uid: 7000, file: '/usr/bin/prlimit', groupDepth: 1 })
    expect(confined.args).toEqual(['--nproc=64:', '--', '/usr/bin/bwrap', ...launch.args])
    expect(confineLaunch(launch, { cgroupProcs: [], ...tools })).toBe(launch)
  })
})
