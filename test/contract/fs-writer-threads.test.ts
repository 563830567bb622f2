import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import {
  MAX_WRITER_THREADS,
  pendingThreadWrites,
  stopWriterThreads,
  writeOnThread,
  writerThreadCount,
  writerThreadFsyncs,
} from '../../adapters/fs/fs-writer-threads.ts'

const CHILD = new URL('./fs-writer-child.ts', import.meta.url).pathname
const encode = (text: string) => new TextEncoder().encode(text)
const decode = (body: Uint8Array) => new TextDecoder().decode(body)

describe('fs store writer threads', () => {
  let root: string

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'turnline-fs-threads-'))
  })
  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('writes overlapping puts on at most MAX_WRITER_THREADS threads, every one readable', async () => {
    const store = new FsObjectStore({ root })
    const writes = Array.from({ length: 48 }, (_, i) =>
      i % 3 === 0
        ? store.put(`o/plain-${i}.json`, encode(`p${i}`))
        : store.put(`o/log/${i}.json`, encode(`c${i}`), { ifNoneMatch: '*' }),
    )
    await Promise.all(writes)
    expect(writerThreadCount()).toBeGreaterThan(0)
    expect(writerThreadCount()).toBeLessThanOrEqual(MAX_WRITER_THREADS)
    for (let i = 0; i < 48; i++) {
      const key = i % 3 === 0 ? `o/plain-${i}.json` : `o/log/${i}.json`
      expect(decode((await store.get(key))!.body)).toBe(i % 3 === 0 ? `p${i}` : `c${i}`)
    }
    expect(await readdir(join(root, '.turnline-fs', 'tmp'))).toEqual([])
  })

  it('removes the temp name on the thread once the link made the name; keeps it when the link fails', async () => {
    const tmpDir = join(root, 'tmp')
    await mkdir(tmpDir)
    const linkTo = join(root, 'linked.json')
    const linked = await writeOnThread({ tmpDir, bytes: encode('one'), durable: true, linkTo })
    expect(linked.removed).toBe(true)
    expect(linked.linkError).toBeUndefined()
    expect(await readdir(tmpDir)).toEqual([])
    expect(await readFile(linkTo, 'utf8')).toBe('one')
    const taken = await writeOnThread({ tmpDir, bytes: encode('two'), durable: true, linkTo })
    expect(taken.linkError?.code).toBe('EEXIST')
    expect(taken.removed).toBeUndefined()
    expect(await readdir(tmpDir)).toEqual([taken.temp.slice(tmpDir.length + 1)])
    expect(await readFile(linkTo, 'utf8')).toBe('one')
  })

  it("leaves the caller's bytes intact, a pooled Buffer's included", async () => {
    const store = new FsObjectStore({ root })
    const pooled = Buffer.from('pooled body')
    const array = encode('array body')
    await store.put('b/pooled.json', pooled, { ifNoneMatch: '*' })
    await store.put('b/array.json', array)
    expect(pooled.toString()).toBe('pooled body')
    expect(decode(array)).toBe('array body')
    expect(Buffer.from('another').toString()).toBe('another')
    expect(decode((await store.get('b/pooled.json'))!.body)).toBe('pooled body')
  })

  it('counts the fsyncs made on the threads, and makes none for a store without durability', async () => {
    const store = new FsObjectStore({ root })
    await store.put('d/0.json', encode('0'), { ifNoneMatch: '*' })
    const before = writerThreadFsyncs()
    // The temp file's bytes, then the folder of the new name.
    await store.put('d/1.json', encode('1'), { ifNoneMatch: '*' })
    expect(writerThreadFsyncs()).toBe(before + 2)
    await new FsObjectStore({ root, durable: false }).put('d/2.json', encode('2'), {
      ifNoneMatch: '*',
    })
    expect(writerThreadFsyncs()).toBe(before + 2)
  })

  it("fsyncs the new name's folder through the given descriptor after the link, answered apart; none when no name was made", async () => {
    const tmpDir = join(root, 'tmp')
    await mkdir(tmpDir)
    const folder = await open(root, 'r')
    try {
      const linkTo = join(root, 'synced.json')
      const write = { tmpDir, durable: true, linkTo, syncFolder: folder.fd }
      const before = writerThreadFsyncs()
      const linked = await writeOnThread({ ...write, bytes: encode('one') })
      expect(linked.removed).toBe(true)
      expect(await linked.folderSync).toEqual({})
      expect(writerThreadFsyncs()).toBe(before + 2)
      const taken = await writeOnThread({ ...write, bytes: encode('two') })
      expect(taken.linkError?.code).toBe('EEXIST')
      expect(await taken.folderSync).toEqual({ skipped: true })
      expect(writerThreadFsyncs()).toBe(before + 3)
      await rm(taken.temp)
      // A descriptor that is not open: the failure comes back with the second answer.
      const bad = await writeOnThread({
        ...write,
        linkTo: join(root, 'unsynced.json'),
        syncFolder: 2 ** 30,
        bytes: encode('three'),
      })
      expect(bad.removed).toBe(true)
      expect((await bad.folderSync)?.error?.code).toBe('EBADF')
      expect(await readFile(join(root, 'unsynced.json'), 'utf8')).toBe('three')
      expect(pendingThreadWrites()).toBe(0)
    } finally {
      await folder.close()
    }
  })

  it('fails the pending writes of a thread that dies, and starts a new thread for the next', async () => {
    await stopWriterThreads()
    const tmpDir = join(root, 'tmp')
    await mkdir(tmpDir)
    // A thread that is still starting has not run the request when it is stopped.
    const pending = writeOnThread({ tmpDir, bytes: encode('lost'), durable: true })
    await stopWriterThreads()
    await expect(pending).rejects.toThrow(/fs writer thread exited/)
    expect(await readdir(tmpDir)).toEqual([])
    const store = new FsObjectStore({ root })
    await store.put('after/1.json', encode('after'), { ifNoneMatch: '*' })
    expect(decode((await store.get('after/1.json'))!.body)).toBe('after')
  })

  it('fails a write whose bytes cannot be sent to a thread, and goes on', async () => {
    const tmpDir = join(root, 'tmp')
    await mkdir(tmpDir)
    // A SharedArrayBuffer cannot be moved: the message is refused before it reaches a thread.
    const shared = new Uint8Array(new SharedArrayBuffer(4)) as unknown as Uint8Array<ArrayBuffer>
    await expect(writeOnThread({ tmpDir, bytes: shared, durable: true })).rejects.toThrow()
    expect(pendingThreadWrites()).toBe(0)
    const written = await writeOnThread({ tmpDir, bytes: encode('next'), durable: true })
    expect(await readFile(written.temp, 'utf8')).toBe('next')
  })

  /** Runs the child program to its exit: its code and what it wrote to stderr. */
  async function runChild(...args: string[]): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, root, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    return { code, stderr }
  }

  it('a pending write keeps the process alive until it is on disk; idle threads do not', async () => {
    expect(await runChild('k/v.json', 'kept')).toEqual({ code: 0, stderr: '' })
    expect(await readFile(join(root, 'k/v.json'), 'utf8')).toBe('kept')
  })

  it('a writer thread that never got a request does not keep the process alive', async () => {
    expect(await runChild('k/none.json', '', 'delete')).toEqual({ code: 0, stderr: '' })
  })
})
