import { execFileSync } from 'node:child_process'
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { forceDescriptorPaths } from '../../adapters/fs/fs-no-follow.ts'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { listAll } from '../../src/ports/object-store.ts'

/**
 * A symbolic link planted in the fs store — in place of a tenant folder, a workspace folder, a
 * session folder, or an object — pointing at a host folder outside the store, is never followed
 * by any read, write, listing or delete, whatever the store meant to do there: the host files
 * stay as they were and nothing new appears beside them. Reads and listings treat a link as
 * absent (nothing behind it exists for the store); writes and deletes through a linked folder
 * fail with corrupt_data; a link at an object's own name is a name like any other (a create-only
 * put conflicts with it, a plain put or a delete replaces or removes the link itself).
 */
const encode = (text: string) => new TextEncoder().encode(text)
const decode = (body: Uint8Array) => new TextDecoder().decode(body)

const SESSION = 'acme/ws/.vtcode/sessions/s1'
/** Linux reaches folders through descriptors; elsewhere the store checks them by path. */
const MODES = [
  ['through descriptors', true],
  ['checked by path', false],
] as const
const LINKED_FOLDERS = [
  ['a tenant folder', 'acme'],
  ['a workspace folder', 'acme/ws'],
  ['a session folder', SESSION],
] as const

let base: string
let root: string
let outside: string
let store: FsObjectStore

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'turnline-fs-links-'))
  root = join(base, 'store')
  outside = join(base, 'host')
  store = new FsObjectStore({ root })
  // The host folder a link points at: it holds every name the store would touch through it.
  for (const rel of [
    'secret.txt',
    'manifest.json',
    'log/0000000000.json',
    'ws/.vtcode/sessions/s1/manifest.json',
    '.vtcode/sessions/s1/manifest.json',
  ]) {
    await mkdir(join(outside, rel, '..'), { recursive: true })
    await writeFile(join(outside, rel), `host file ${rel}`)
  }
})
afterEach(async () => {
  await rm(base, { recursive: true, force: true })
})

/** Every entry under `dir` with its type and content: what must not change. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {}
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name)
    const info = await lstat(path)
    result[path.slice(dir.length)] = info.isFile()
      ? `file ${info.mode.toString(8)} ${await readFile(path, 'utf8')}`
      : info.isDirectory()
        ? `dir ${info.mode.toString(8)}`
        : 'other'
  }
  return result
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    return isTurnlineError(error) ? error.code : `raw ${String(error)}`
  }
}

/** Replaces the store's folder `rel` by a link to the host folder. */
async function plantFolderLink(rel: string): Promise<void> {
  await rm(join(root, rel), { recursive: true, force: true })
  await symlink(outside, join(root, rel))
}

describe.each(MODES)('the fs store, folders %s', (_, descriptors) => {
  beforeEach(() => forceDescriptorPaths(descriptors ? undefined : false))
  afterEach(() => forceDescriptorPaths(undefined))

  describe('a link planted in place of a folder of the fs store', () => {
    it.each(LINKED_FOLDERS)('%s: no operation follows it', async (_, rel) => {
      await store.put(`${SESSION}/manifest.json`, encode('mine'))
      await store.put(`${SESSION}/log/0000000000.json`, encode('batch'), { ifNoneMatch: '*' })
      await store.put('acme/other/kept.json', encode('kept'))
      await plantFolderLink(rel)
      const before = await snapshot(outside)
      const inside = (key: string) => `${rel}/${key}`
      const keys = [
        inside('manifest.json'),
        inside('secret.txt'),
        inside('log/0000000000.json'),
        `${SESSION}/manifest.json`,
        `${SESSION}/log/0000000000.json`,
      ]

      // Reads: nothing behind the link exists.
      for (const key of keys) expect(await store.get(key), key).toBeNull()
      const listed = (await listAll(store, '')).objects.map((o) => o.key)
      expect(listed).toEqual(['acme/other/kept.json'].filter(() => rel !== 'acme'))
      expect((await listAll(store, `${rel}/`)).objects).toEqual([])
      expect((await listAll(store, `${SESSION}/log/`)).objects).toEqual([])

      // Writes and deletes through it: refused, clearly.
      for (const key of keys) {
        expect(await codeOf(store.put(key, encode('evil')))).toBe('corrupt_data')
        expect(await codeOf(store.put(key, encode('evil'), { ifNoneMatch: '*' }))).toBe(
          'corrupt_data',
        )
        expect(await codeOf(store.put(key, encode('evil'), { ifMatch: '"x"' }))).toBe('not_found')
        expect(await codeOf(store.delete(key))).toBe('corrupt_data')
        expect(await codeOf(store.put(`${key}.new/deeper.json`, encode('evil')))).toBe(
          'corrupt_data',
        )
      }
      expect(await snapshot(outside)).toEqual(before)
      // The link itself is still there, untouched.
      expect((await lstat(join(root, rel))).isSymbolicLink()).toBe(true)
    })
  })

  describe('a link planted at the name of an object', () => {
    const key = `${SESSION}/manifest.json`
    const hostFile = () => join(outside, 'secret.txt')

    beforeEach(async () => {
      await store.put(key, encode('mine'))
      await rm(join(root, key))
      await symlink(hostFile(), join(root, key))
    })

    it('is read and listed as absent, and its target never read', async () => {
      expect(await store.get(key)).toBeNull()
      expect((await listAll(store, `${SESSION}/`)).objects).toEqual([])
    })

    it('a create-only put refuses it; a compare-and-swap finds nothing to replace', async () => {
      expect(await codeOf(store.put(key, encode('evil'), { ifNoneMatch: '*' }))).toBe(
        'corrupt_data',
      )
      expect(await codeOf(store.put(key, encode('evil'), { ifMatch: '"x"' }))).toBe('not_found')
      expect(await readFile(hostFile(), 'utf8')).toBe('host file secret.txt')
    })

    it('a plain put replaces the link itself, a delete removes the link: the target is unchanged', async () => {
      await store.put(key, encode('replaced'))
      expect((await lstat(join(root, key))).isFile()).toBe(true)
      expect(decode((await store.get(key))!.body)).toBe('replaced')
      await rm(join(root, key))
      await symlink(hostFile(), join(root, key))
      await store.delete(key)
      await expect(lstat(join(root, key))).rejects.toMatchObject({ code: 'ENOENT' })
      expect(await readFile(hostFile(), 'utf8')).toBe('host file secret.txt')
    })
  })

  it('a FIFO made at an object name is absent, and reading it never blocks', async () => {
    const key = `${SESSION}/manifest.json`
    await store.put(key, encode('mine'))
    await rm(join(root, key))
    execFileSync('mkfifo', [join(root, key)])
    expect(await store.get(key)).toBeNull()
    expect((await listAll(store, `${SESSION}/`)).objects).toEqual([])
  })

  describe('a link the store had a handle on before it was planted', () => {
    it('is not followed by the kept handle nor by a new one', async () => {
      // The log folder's handle is kept from this write on.
      await store.put(`${SESSION}/log/0000000000.json`, encode('batch 0'), { ifNoneMatch: '*' })
      const before = await snapshot(outside)
      await rm(join(root, SESSION, 'log'), { recursive: true })
      await symlink(join(outside, 'log'), join(root, SESSION, 'log'))
      expect(await store.get(`${SESSION}/log/0000000000.json`)).toBeNull()
      expect(
        await codeOf(
          store.put(`${SESSION}/log/0000000001.json`, encode('b1'), { ifNoneMatch: '*' }),
        ),
      ).toBe('corrupt_data')
      expect(await snapshot(outside)).toEqual(before)
    })
  })
})
