import { chmod, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { prepareRunnerLayout } from '../../functions/entries/runner-layout.ts'
import { ConfigError } from '../../functions/env-config.ts'
import { STORE_ROOT_FOLDERS } from '../../src/contract/store-root-folders.ts'
import { startNodeEntry } from '../support/node-entry.ts'

/**
 * The embedded runner's workspaces live in a tree of their own, never among the tenants'
 * folders of the session store, and a data dir of the earlier layout (`<data dir>/runner`)
 * goes on working: its workspaces are moved at start.
 */
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-layout-'))
  // The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700).
  await chmod(dir, 0o711)
})
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

const exists = (path: string) =>
  readdir(path).then(
    () => true,
    () => false,
  )

/** The default layout of a filesystem store in `data`. */
const layoutOf = (data: string, multiTenant = false) =>
  prepareRunnerLayout({ root: undefined, dataDir: data, storeDir: data, multiTenant })

describe('the runner layout', () => {
  it('puts the workspaces beside the data dir by default, not in it', async () => {
    const data = join(dir, 'plain')
    const layout = await layoutOf(data)
    expect(layout.root).toBe(`${data}-runner`)
    expect(await exists(layout.root)).toBe(true)
    expect(layout.warnings).toEqual([])
  })

  it('refuses a runner root that shares a tree with the filesystem store', async () => {
    const data = join(dir, 'nested')
    for (const root of [join(data, 'workspaces'), data, dir]) {
      await expect(
        prepareRunnerLayout({ root, dataDir: data, storeDir: data, multiTenant: false }),
      ).rejects.toThrow(ConfigError)
    }
    // A folder that cannot be made is a configuration error too, naming the variable.
    await writeFile(join(dir, 'a-file'), '')
    await expect(
      prepareRunnerLayout({
        root: join(dir, 'a-file', 'runner'),
        dataDir: data,
        storeDir: data,
        multiTenant: false,
      }),
    ).rejects.toThrow(/TURNLINE_RUNNER_ROOT: cannot create/)
    // With sessions in S3 the data dir holds no tenant folders.
    const s3 = await prepareRunnerLayout({
      root: join(data, 'workspaces'),
      dataDir: data,
      storeDir: undefined,
      multiTenant: true,
    })
    expect(s3.warnings).toEqual([])
  })

  it('warns with several tenants when workspaces and sessions share a filesystem', async () => {
    const data = join(dir, 'shared-fs')
    const multi = await layoutOf(data, true)
    expect(multi.warnings.join('\n')).toMatch(/same filesystem as the sessions/)
    expect(multi.warnings.join('\n')).toMatch(/filesystem of its own/)
  })

  it('leaves a legacy folder that also holds a tenant named "runner", saying so', async () => {
    const data = join(dir, 'tenant-runner')
    const legacy = join(data, STORE_ROOT_FOLDERS.legacyRunner)
    await mkdir(join(legacy, STORE_ROOT_FOLDERS.deployment, 'sessions'), { recursive: true })
    await mkdir(join(legacy, '.runner-state'), { recursive: true })
    const layout = await layoutOf(data)
    expect(layout.warnings.join('\n')).toMatch(/left in place.*tenant named "runner"/)
    expect(await exists(join(legacy, STORE_ROOT_FOLDERS.deployment))).toBe(true)
  })

  it('leaves a legacy folder when the runner root is in use already', async () => {
    const data = join(dir, 'both')
    await mkdir(join(data, 'runner', 'local', 'old'), { recursive: true })
    await mkdir(join(`${data}-runner`, 'local', 'new'), { recursive: true })
    const layout = await layoutOf(data)
    expect(layout.warnings.join('\n')).toMatch(/left in place.*in use already/)
    expect(await readdir(join(`${data}-runner`, 'local'))).toEqual(['new'])
  })
})

describe('a data dir of the earlier layout under npm start', { timeout: 120_000 }, () => {
  it('moves the workspaces out of the data dir; a session started before finds its files', async () => {
    const data = join(dir, 'upgrade')
    const workspaces = `${data}-runner`
    const api = async (base: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      })
      return (await response.json()) as Record<string, unknown>
    }
    const before = startNodeEntry({ PORT: '0', TURNLINE_DATA_DIR: data })
    let session: string
    try {
      const base = await before.listening()
      session = String((await api(base, '/v1/sessions')).session_id)
      const wrote = await api(base, `/v1/sessions/${session}/turns`, {
        input: 'write notes.txt: kept across the upgrade',
      })
      expect(wrote.status, JSON.stringify(wrote)).toBe('completed')
    } finally {
      await before.stop()
    }
    // What an earlier version left: the runner's folder inside the data dir.
    await rename(workspaces, join(data, 'runner'))
    expect(await readFile(join(data, 'runner', 'local', session, 'notes.txt'), 'utf8')).toBe(
      'kept across the upgrade',
    )

    const after = startNodeEntry({ PORT: '0', TURNLINE_DATA_DIR: data })
    try {
      const base = await after.listening()
      expect(after.output()).toMatch(/moved the runner's workspaces from .*\/upgrade\/runner/)
      expect(await exists(join(data, 'runner'))).toBe(false)
      const read = await api(base, `/v1/sessions/${session}/turns`, { input: 'read notes.txt' })
      expect(read.status, JSON.stringify(read)).toBe('completed')
      expect(JSON.stringify(read.events)).toContain('kept across the upgrade')
    } finally {
      await after.stop()
    }
    expect(await readFile(join(workspaces, 'local', session, 'notes.txt'), 'utf8')).toBe(
      'kept across the upgrade',
    )
    // The data dir holds the sessions only.
    expect(await readdir(data)).not.toContain('runner')
  })
})
