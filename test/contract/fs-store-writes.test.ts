import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { HERE_MAX_BYTES } from '../../adapters/fs/fs-append-here.ts'
import { syncNewName } from '../../adapters/fs/fs-durability.ts'
import {
  cachedFolderCount,
  cachedFolderIdentity,
  holdFolder,
  MAX_FOLDER_HANDLES,
} from '../../adapters/fs/fs-folder-handles.ts'
import { FsObjectStore, fsLockPath } from '../../adapters/fs/fs-object-store.ts'
import { writerThreadFsyncs, writerThreadRequests } from '../../adapters/fs/fs-writer-threads.ts'
import { outcome } from './object-store.suite.ts'

const encode = (text: string) => new TextEncoder().encode(text)
const decode = (body: Uint8Array) => new TextDecoder().decode(body)

async function identity(dir: string): Promise<{ dev: bigint; ino: bigint }> {
  const info = await stat(dir, { bigint: true })
  return { dev: info.dev, ino: info.ino }
}

describe('fs store writes: kept folder handles, writer threads and overlapped steps', () => {
  let root: string
  let store: FsObjectStore

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'turnline-fs-writes-'))
    store = new FsObjectStore({ root })
  })
  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it("tells a create-only put's caller when the name exists, before the put settles; never on a conflict", async () => {
    const seen: string[] = []
    let settled = false
    const reads: Promise<string | null | undefined>[] = []
    const put = store
      .put('n/log/0001.json', encode('one'), {
        ifNoneMatch: '*',
        onNamed: () => {
          seen.push(settled ? 'named after the put settled' : 'named')
          reads.push(store.get('n/log/0001.json').then((o) => o && decode(o.body)))
        },
      })
      .then(() => {
        settled = true
      })
    await put
    expect(seen).toEqual(['named'])
    expect(await Promise.all(reads)).toEqual(['one'])
    await expect(
      store.put('n/log/0001.json', encode('two'), {
        ifNoneMatch: '*',
        onNamed: () => seen.push('named on a conflict'),
      }),
    ).rejects.toMatchObject({ code: 'conflict' })
    expect(seen).toEqual(['named'])
  })

  it('keeps a handle on the folder a new name was made in, and fsyncs through it', async () => {
    await store.put('s/log/0001.json', encode('1'), { ifNoneMatch: '*' })
    const dir = join(root, 's/log')
    expect(await cachedFolderIdentity(dir)).toEqual(await identity(dir))
    const fsyncs = writerThreadFsyncs()
    await store.put('s/log/0002.json', encode('2'), { ifNoneMatch: '*' })
    // The temp file and the folder, both on the writer thread, the folder through the handle.
    expect(writerThreadFsyncs()).toBe(fsyncs + 2)
    expect(await cachedFolderIdentity(dir)).toEqual(await identity(dir))
    expect(await readdir(join(root, '.turnline-fs', 'tmp'))).toEqual([])
  })

  it('fsyncs an append unless it is asked not to; an append of no bytes only fsyncs', async () => {
    await store.append('s/events.jsonl', encode('a\n'), { at: 0, ifSize: 0 })
    const fsyncs = writerThreadFsyncs()
    await store.append('s/events.jsonl', encode('b\n'), { at: 2, ifSize: 2, durable: false })
    await store.append('s/events.jsonl', encode('c\n'), { at: 4, ifSize: 4, durable: false })
    expect(writerThreadFsyncs()).toBe(fsyncs)
    await store.append('s/events.jsonl', new Uint8Array(0), { at: 6, ifSize: 6 })
    expect(writerThreadFsyncs()).toBe(fsyncs + 1)
    await store.append('s/events.jsonl', encode('d\n'), { at: 6, ifSize: 6 })
    expect(writerThreadFsyncs()).toBe(fsyncs + 2)
    expect(decode((await store.get('s/events.jsonl'))!.body)).toBe('a\nb\nc\nd\n')
  })

  it('makes a small unsynced append to a file that exists on the calling thread, every other on a writer thread', async () => {
    const requests = writerThreadRequests()
    await store.append('s/events.jsonl', encode('a\n'), { at: 0, ifSize: 0, durable: false })
    expect(writerThreadRequests()).toBe(requests + 1) // the file is made on a thread
    await store.append('s/events.jsonl', encode('b\n'), { at: 2, ifSize: 2, durable: false })
    expect(
      await outcome(
        store.append('s/events.jsonl', encode('x'), { at: 2, ifSize: 2, durable: false }),
      ),
    ).toBe('conflict')
    expect(writerThreadRequests()).toBe(requests + 1)
    await store.append('s/events.jsonl', encode('c\n'), { at: 4, ifSize: 4 })
    expect(writerThreadRequests()).toBe(requests + 2) // synced
    const large = new Uint8Array(HERE_MAX_BYTES + 1).fill(0x61)
    await store.append('s/events.jsonl', large, { at: 6, ifSize: 6, durable: false })
    expect(writerThreadRequests()).toBe(requests + 3) // larger than an append made here
    const size = 6 + large.byteLength
    const torn = encode('torn, not a whole line')
    await store.append('s/events.jsonl', torn, { at: size, ifSize: size, durable: false })
    await store.append('s/events.jsonl', encode('d\n'), {
      at: size,
      ifSize: size + torn.byteLength,
      durable: false,
    })
    expect(writerThreadRequests()).toBe(requests + 3)
    const body = decode((await store.get('s/events.jsonl'))!.body)
    expect(body).toBe(`a\nb\nc\n${'a'.repeat(large.byteLength)}d\n`)
    // Something other than a file at the name is refused here as on a thread.
    await mkdir(join(root, 's/folder.jsonl'))
    execFileSync('mkfifo', [join(root, 's/fifo.jsonl')])
    for (const key of ['s/folder.jsonl', 's/fifo.jsonl']) {
      const appended = store.append(key, encode('x'), { at: 0, ifSize: 0, durable: false })
      expect(await outcome(appended)).toBe('corrupt_data')
    }
  })

  it('keeps a handle on the folder a plain put made a new name in', async () => {
    await store.put('s/state/a.json', encode('1'))
    const dir = join(root, 's/state')
    expect(await cachedFolderIdentity(dir)).toEqual(await identity(dir))
    await store.put('s/state/b.json', encode('2'))
    expect(await cachedFolderIdentity(dir)).toEqual(await identity(dir))
  })

  it('notices a folder deleted and made again, and uses the new one', async () => {
    await store.put('s/log/plain.json', encode('p'))
    const dir = join(root, 's/log')
    const old = await identity(dir)
    expect(await cachedFolderIdentity(dir)).toEqual(old)
    // Another process removes the folder and makes a new one at the same path.
    await rm(dir, { recursive: true })
    await mkdir(dir)
    const fresh = await identity(dir)
    expect(fresh).not.toEqual(old)
    await store.put('s/log/plain.json', encode('q'))
    expect(await cachedFolderIdentity(dir)).toEqual(fresh)
    await store.put('s/log/0002.json', encode('2'), { ifNoneMatch: '*' })
    expect(decode((await store.get('s/log/0002.json'))!.body)).toBe('2')
    // The same through a read of a file made by hand in the new folder.
    await rm(dir, { recursive: true })
    await mkdir(dir)
    await writeFile(join(dir, 'by-hand.json'), 'h')
    expect(decode((await store.get('s/log/by-hand.json'))!.body)).toBe('h')
    expect(await cachedFolderIdentity(dir)).toEqual(await identity(dir))
  })

  it('drops the handle of a folder that a delete pruned, and remakes it on the next write', async () => {
    await store.put('p/q/1.json', encode('1'), { ifNoneMatch: '*' })
    const dir = join(root, 'p/q')
    expect(await cachedFolderIdentity(dir)).toBeDefined()
    await store.delete('p/q/1.json')
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await cachedFolderIdentity(dir)).toBeUndefined()
    await store.put('p/q/2.json', encode('2'), { ifNoneMatch: '*' })
    expect(await cachedFolderIdentity(dir)).toEqual(await identity(dir))
    expect(decode((await store.get('p/q/2.json'))!.body)).toBe('2')
  })

  it('keeps at most MAX_FOLDER_HANDLES handles, also under concurrent writes', async () => {
    const folders = MAX_FOLDER_HANDLES * 2
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        Array.from({ length: folders }, (_, i) =>
          store.put(`many/${i}/${round}.json`, encode(`${i}:${round}`), { ifNoneMatch: '*' }),
        ),
      )
      expect(cachedFolderCount()).toBeLessThanOrEqual(MAX_FOLDER_HANDLES)
    }
    for (let i = 0; i < folders; i++) {
      expect(decode((await store.get(`many/${i}/2.json`))!.body)).toBe(`${i}:2`)
    }
  })

  it('treats a folder that is gone as nothing to sync', async () => {
    await mkdir(join(root, 'gone'))
    const { folder } = await holdFolder(root, join(root, 'gone'))
    await rm(join(root, 'gone'), { recursive: true })
    await expect(syncNewName(root, folder, undefined)).resolves.toBeUndefined()
    folder.release()
  })

  it('a temp file that cannot be written fails the put, releases the lock, leaves nothing', async () => {
    const { etag } = await store.put('m.json', encode('v1'))
    const tmp = join(root, '.turnline-fs', 'tmp')
    await rm(tmp, { recursive: true })
    await writeFile(tmp, 'not a folder')
    await expect(store.put('m.json', encode('v2'), { ifMatch: etag })).rejects.toMatchObject({
      code: 'storage_unavailable',
    })
    await expect(store.put('m.json', encode('v2'))).rejects.toMatchObject({
      code: 'storage_unavailable',
    })
    await expect(stat(fsLockPath(store, 'm.json'))).rejects.toMatchObject({ code: 'ENOENT' })
    await rm(tmp)
    await mkdir(tmp)
    await store.put('m.json', encode('v2'), { ifMatch: etag })
    expect(decode((await store.get('m.json'))!.body)).toBe('v2')
    expect(await readdir(tmp)).toEqual([])
  })

  it('a failed compare fails while the temp file is written, and leaves nothing', async () => {
    await store.put('c.json', encode('v1'))
    await expect(
      store.put('c.json', encode('v2'), { ifMatch: '"not-the-etag"' }),
    ).rejects.toMatchObject({ code: 'conflict' })
    await expect(store.put('none.json', encode('v2'), { ifMatch: '"x"' })).rejects.toMatchObject({
      code: 'not_found',
    })
    expect(await readdir(join(root, '.turnline-fs', 'tmp'))).toEqual([])
    expect(await readdir(join(root, '.turnline-fs', 'locks'))).toEqual([])
    expect(decode((await store.get('c.json'))!.body)).toBe('v1')
  })

  it('prepared ahead, sets itself up before any write; a failed preparation is met again by the first write', async () => {
    // A temp file a killed process left an hour ago: the setup's sweep removes it.
    const tmp = join(root, '.turnline-fs', 'tmp')
    await mkdir(tmp, { recursive: true })
    await writeFile(join(tmp, 'left'), 'x')
    const hourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
    await utimes(join(tmp, 'left'), hourAgo, hourAgo)
    store.prepareAhead()
    for (let tries = 0; (await readdir(tmp)).length > 0; tries++) {
      expect(tries, 'the sweep of a store prepared ahead').toBeLessThan(500)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(await readdir(join(root, '.turnline-fs'))).toEqual(expect.arrayContaining(['locks']))

    // A root that cannot be made (a file in its place): nothing thrown ahead; the write says so,
    // and once the root can be made, the next write sets the store up and succeeds.
    const blocked = join(root, 'blocked')
    await writeFile(blocked, 'not a folder')
    const later = new FsObjectStore({ root: join(blocked, 'store') })
    later.prepareAhead()
    await expect(later.put('k', encode('v'))).rejects.toMatchObject({ code: 'storage_unavailable' })
    await rm(blocked)
    await later.put('k', encode('v'))
    expect(decode((await later.get('k'))!.body)).toBe('v')
  })
})
