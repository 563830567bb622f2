import { lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { forceDescriptorPaths } from '../../adapters/fs/fs-no-follow.ts'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { codeOf, snapshot, watchFolders } from '../support/host-folder-watch.ts'

/**
 * The fs store's own working folders (`.turnline-fs/tmp` for every write's temp file,
 * `.turnline-fs/locks` for the lock of a key being replaced or deleted) are no way out of the
 * root either: with a link planted in place of either, or of `.turnline-fs` itself — while the
 * store is in use or before it starts — no temp file or lock is made in the host folder the link
 * points at, not even for a moment, and what needs the linked folder fails with corrupt_data.
 */
const encode = (text: string) => new TextEncoder().encode(text)
const decode = (body: Uint8Array) => new TextDecoder().decode(body)

const MODES = [
  ['through descriptors', true],
  ['checked by path', false],
] as const

/** Each linked folder, and how each write ends with it linked. */
const LINKED = [
  ['.turnline-fs', { put: 'corrupt_data', create: 'corrupt_data', delete: 'corrupt_data' }],
  ['.turnline-fs/tmp', { put: 'corrupt_data', create: 'corrupt_data', delete: 'ok' }],
  // A create-only put takes no lock.
  ['.turnline-fs/locks', { put: 'corrupt_data', create: 'ok', delete: 'corrupt_data' }],
] as const

let base: string
let root: string
let outside: string
/** The host folder and the folders in it a linked `.turnline-fs` would lead to. */
let hostFolders: string[]

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'turnline-fs-work-links-'))
  root = join(base, 'store')
  outside = join(base, 'host')
  hostFolders = [outside, join(outside, 'tmp'), join(outside, 'locks')]
  for (const dir of hostFolders) await mkdir(dir, { recursive: true })
  await writeFile(join(outside, 'secret.txt'), 'host file')
})
afterEach(async () => {
  await rm(base, { recursive: true, force: true })
})

async function plantLink(rel: string): Promise<void> {
  await rm(join(root, rel), { recursive: true, force: true })
  await symlink(outside, join(root, rel))
}

describe.each(MODES)('the fs store, folders %s', (_, descriptors) => {
  beforeEach(() => forceDescriptorPaths(descriptors ? undefined : false))
  afterEach(() => forceDescriptorPaths(undefined))

  it.each(LINKED)('a link in place of %s while the store is in use', async (rel, outcomes) => {
    // Short lock timings: a write that could not take its lock must not wait long to say so.
    const store = new FsObjectStore({ root, lock: { timeoutMs: 500 } })
    const { etag } = await store.put('acme/m.json', encode('v1'))
    await store.put('acme/log/0000000000.json', encode('b0'), { ifNoneMatch: '*' })
    await store.put('acme/gone.json', encode('x'))
    await plantLink(rel)
    const before = await snapshot(outside)
    const watched = watchFolders(hostFolders)

    expect(await codeOf(store.put('acme/m.json', encode('v2'), { ifMatch: etag }))).toBe(
      outcomes.put,
    )
    expect(await codeOf(store.put('acme/new.json', encode('new')))).toBe(outcomes.put)
    expect(
      await codeOf(store.put('acme/log/0000000001.json', encode('b1'), { ifNoneMatch: '*' })),
    ).toBe(outcomes.create)
    expect(await codeOf(store.delete('acme/gone.json'))).toBe(outcomes.delete)

    // Reads need no working folder.
    expect(decode((await store.get('acme/m.json'))!.body)).toBe('v1')
    expect(decode((await store.get('acme/log/0000000000.json'))!.body)).toBe('b0')
    expect(await snapshot(outside)).toEqual(before)
    expect(await watched.changes()).toEqual([])
    expect((await lstat(join(root, rel))).isSymbolicLink()).toBe(true)
  })

  it.each(LINKED)('a link in place of %s before the store starts', async (rel) => {
    await new FsObjectStore({ root }).put('acme/m.json', encode('v1'))
    await plantLink(rel)
    const before = await snapshot(outside)
    const watched = watchFolders(hostFolders)
    const store = new FsObjectStore({ root, lock: { timeoutMs: 500 } })

    expect(await codeOf(store.put('acme/m.json', encode('v2')))).toBe('corrupt_data')
    expect(await codeOf(store.put('acme/n.json', encode('n'), { ifNoneMatch: '*' }))).toBe(
      'corrupt_data',
    )
    expect(decode((await store.get('acme/m.json'))!.body)).toBe('v1')
    expect(await snapshot(outside)).toEqual(before)
    expect(await watched.changes()).toEqual([])
  })
})

describe('a working folder removed while the store is in use', () => {
  it.each(['.turnline-fs', '.turnline-fs/tmp', '.turnline-fs/locks'])(
    '%s is made again by the next write',
    async (rel) => {
      const store = new FsObjectStore({ root, lock: { timeoutMs: 500 } })
      const { etag } = await store.put('acme/m.json', encode('v1'))
      await rm(join(root, rel), { recursive: true })
      await store.put('acme/m.json', encode('v2'), { ifMatch: etag })
      await store.put('acme/log/0000000000.json', encode('b0'), { ifNoneMatch: '*' })
      await store.delete('acme/log/0000000000.json')
      expect(decode((await store.get('acme/m.json'))!.body)).toBe('v2')
      expect((await lstat(join(root, rel))).isDirectory()).toBe(true)
    },
  )
})
