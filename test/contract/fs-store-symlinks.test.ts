import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { forceDescriptorPaths } from '../../adapters/fs/fs-no-follow.ts'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { codeOf, snapshot, watchFolders } from '../support/host-folder-watch.ts'

/**
 * A symbolic link planted in the fs store — in place of a tenant folder, a workspace folder, a
 * session folder, a `.turnline` folder (the key registry, a tenant's session pointers), or an
 * object — pointing at a host folder outside the store, is never followed by any read, write,
 * listing or delete, whatever the store meant to do there: the host files stay as they were,
 * nothing is made or changed in the host folder even for a moment, and the rest of the store
 * reads as before. The same holds while a folder of the store and a link to the host folder are
 * exchanged (`renameat2(RENAME_EXCHANGE)`) as fast as a process can, during writes, reads and
 * listings that reach the folder anew each time. Reads and listings treat a link as
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
  ['the deployment folder (key registry)', '.turnline'],
  ["a tenant's session pointers folder", 'acme/.turnline'],
] as const
/** What the store holds before a link is planted: key → body. */
const STORED: Record<string, string> = {
  '.turnline/api-keys.json': 'registry',
  'acme/.turnline/sessions/s1.json': 'pointer',
  [`${SESSION}/manifest.json`]: 'mine',
  [`${SESSION}/log/0000000000.json`]: 'batch',
  'acme/other/kept.json': 'kept',
}
/** The host folder a link points at holds every name the store would touch through it. */
const HOST_FILES = [
  'secret.txt',
  'manifest.json',
  'api-keys.json',
  'sessions/s1.json',
  'log/0000000000.json',
  'ws/.vtcode/sessions/s1/manifest.json',
  '.vtcode/sessions/s1/manifest.json',
]

let base: string
let root: string
let outside: string
let store: FsObjectStore

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'turnline-fs-links-'))
  root = join(base, 'store')
  outside = join(base, 'host')
  store = new FsObjectStore({ root })
  for (const rel of HOST_FILES) {
    await mkdir(join(outside, rel, '..'), { recursive: true })
    await writeFile(join(outside, rel), `host file ${rel}`)
  }
})
afterEach(async () => {
  await rm(base, { recursive: true, force: true })
})

/** Replaces the store's folder `rel` by a link to the host folder. */
async function plantFolderLink(rel: string): Promise<void> {
  await rm(join(root, rel), { recursive: true, force: true })
  await symlink(outside, join(root, rel))
}

/** Every folder of the host tree, to be watched for changes. */
async function hostFolders(): Promise<string[]> {
  const entries = await readdir(outside, { recursive: true, withFileTypes: true })
  const below = entries.filter((e) => e.isDirectory()).map((e) => join(e.parentPath, e.name))
  return [outside, ...below]
}

describe.each(MODES)('the fs store, folders %s', (_, descriptors) => {
  beforeEach(() => forceDescriptorPaths(descriptors ? undefined : false))
  afterEach(() => forceDescriptorPaths(undefined))

  describe('a link planted in place of a folder of the fs store', () => {
    it.each(LINKED_FOLDERS)('%s: no operation follows it', async (_, rel) => {
      for (const [key, body] of Object.entries(STORED)) {
        await store.put(key, encode(body), key.includes('/log/') ? { ifNoneMatch: '*' } : {})
      }
      await plantFolderLink(rel)
      const before = await snapshot(outside)
      const watched = watchFolders(await hostFolders())
      const behind = Object.keys(STORED).filter((key) => key.startsWith(`${rel}/`))
      const kept = Object.keys(STORED).filter((key) => !behind.includes(key))
      const keys = [...HOST_FILES.map((name) => `${rel}/${name}`), ...behind]

      // Reads: nothing behind the link exists; the rest of the store is as it was.
      for (const key of keys) expect(await store.get(key), key).toBeNull()
      for (const key of kept) expect(decode((await store.get(key))!.body), key).toBe(STORED[key])
      expect((await listAll(store, '')).objects.map((o) => o.key)).toEqual(kept.sort())
      expect((await listAll(store, `${rel}/`)).objects).toEqual([])
      expect((await listAll(store, `${rel}/sessions/`)).objects).toEqual([])

      // Writes and deletes through it: refused, clearly.
      for (const key of keys) {
        expect(await codeOf(store.put(key, encode('evil')))).toBe('corrupt_data')
        expect(await codeOf(store.put(key, encode('evil'), { ifNoneMatch: '*' }))).toBe(
          'corrupt_data',
        )
        expect(await codeOf(store.put(key, encode('evil'), { ifMatch: '"x"' }))).toBe('not_found')
        expect(await codeOf(store.delete(key))).toBe('corrupt_data')
        expect(await codeOf(store.append(key, encode('evil'), { at: 0, ifSize: 0 }))).toBe(
          'corrupt_data',
        )
        expect(await codeOf(store.put(`${key}.new/deeper.json`, encode('evil')))).toBe(
          'corrupt_data',
        )
      }
      expect(await snapshot(outside)).toEqual(before)
      expect(await watched.changes()).toEqual([])
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

    it('an append refuses it, at any size it expects, synced or not: the target is unchanged', async () => {
      for (const ifSize of [0, 'host file secret.txt'.length]) {
        for (const durable of [true, false]) {
          const appended = store.append(key, encode('evil'), { at: ifSize, ifSize, durable })
          expect(await codeOf(appended)).toBe('corrupt_data')
        }
      }
      expect(await readFile(hostFile(), 'utf8')).toBe('host file secret.txt')
      expect((await lstat(join(root, key))).isSymbolicLink()).toBe(true)
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
    expect(await codeOf(store.append(key, encode('x'), { at: 0, ifSize: 0 }))).toBe('corrupt_data')
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

/** Exchanges the two paths (`renameat2(RENAME_EXCHANGE)`) as fast as it can, until killed. */
const EXCHANGER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
print('ready', flush=True)
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
`

describe('a folder exchanged with a link again and again while the store works', () => {
  it('nothing is read from, made in or changed in the folder the link points at', async () => {
    await store.put('acme/seed.json', encode('seed'))
    await symlink(outside, join(root, 'swap'))
    const before = await snapshot(outside)
    const watched = watchFolders(await hostFolders())
    const exchanger = spawn('python3', ['-c', EXCHANGER, join(root, 'acme'), join(root, 'swap')])
    const exited = once(exchanger, 'exit')
    await once(exchanger.stdout, 'data')
    const outcomes = new Set<string>()
    try {
      for (let i = 0; i < 150; i++) {
        // A new session folder each time: reached (and made) anew, through the swapped folder.
        const key = `acme/ws${i}/.vtcode/sessions/s1/log/0000000000.json`
        outcomes.add(await codeOf(store.put(key, encode('batch'), { ifNoneMatch: '*' })))
        outcomes.add(await codeOf(store.put(`acme/ws${i}/manifest.json`, encode('m'))))
        expect(await store.get('acme/secret.txt')).toBeNull()
        expect(await store.get(`acme/ws${i}.new/../secret.txt`).catch(() => null)).toBeNull()
        const seed = await store.get('acme/seed.json')
        if (seed !== null) expect(decode(seed.body)).toBe('seed')
        const listed = await listAll(store, 'acme/', { delimiter: '/' })
        const names = [...listed.objects.map((o) => o.key), ...listed.prefixes]
        expect(names.filter((k) => !/^acme\/(seed\.json|ws\d+\/)$/.test(k))).toEqual([])
      }
    } finally {
      exchanger.kill('SIGKILL')
      await exited
    }
    // Every write either landed in the store's own folder or was refused as a link.
    expect([...outcomes].filter((o) => o !== 'ok' && o !== 'corrupt_data')).toEqual([])
    expect(await snapshot(outside)).toEqual(before)
    expect(await watched.changes()).toEqual([])
  })
})
