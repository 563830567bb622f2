import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readdir, rm, stat, utimes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import lockfile from 'proper-lockfile'
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { withFileLock } from '../../adapters/fs/fs-lock.ts'
import { forceDescriptorPaths } from '../../adapters/fs/fs-no-follow.ts'
import { FsObjectStore, fsLockPath } from '../../adapters/fs/fs-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { gate } from '../support/gate.ts'
import { describeObjectStore } from './object-store.suite.ts'
import { describeAppends } from './object-store-append.suite.ts'

const CHILD = new URL('./fs-race-child.ts', import.meta.url).pathname
const encode = (text: string) => new TextEncoder().encode(text)
const decode = (body: Uint8Array) => new TextDecoder().decode(body)

async function tempRoot(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'turnline-fs-store-'))
}

/** Every file under `dir`, relative, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return []
      throw error
    },
  )
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort()
}

/** A store in a fresh folder; nothing may be left in its working folder once all settled. */
async function freshStore() {
  const root = await tempRoot()
  return {
    store: new FsObjectStore({ root }),
    cleanup: async () => {
      expect(await filesUnder(join(root, '.turnline-fs'))).toEqual([])
      await rm(root, { recursive: true, force: true })
    },
  }
}

describeObjectStore('fs', freshStore)

describeAppends('fs', freshStore)

// Appends not asked to be synced (events.jsonl's and the turn index's on every commit): the same
// contract.
describeAppends('fs, appends unsynced unless asked', async () => {
  const fixture = await freshStore()
  const { store } = fixture
  const unsynced: ObjectStore = {
    get: (key) => store.get(key),
    put: (key, body, options) => store.put(key, body, options),
    list: (prefix, options) => store.list(prefix, options),
    delete: (key) => store.delete(key),
    append: (key, bytes, options) =>
      store.append(key, bytes, { ...options, durable: options.durable ?? false }),
  }
  return { ...fixture, store: unsynced }
})

// Where /proc/self/fd is missing (not Linux) the store reaches its folders by path, each
// component checked: the same contract.
describeObjectStore('fs, folders checked by path', async () => {
  const root = await tempRoot()
  forceDescriptorPaths(false)
  return {
    store: new FsObjectStore({ root }),
    cleanup: async () => {
      forceDescriptorPaths(undefined)
      expect(await filesUnder(join(root, '.turnline-fs'))).toEqual([])
      await rm(root, { recursive: true, force: true })
    },
  }
})

/** Starts `count` children, waits until all are ready, releases them together. */
async function raceChildren(args: (i: number) => string[], count: number): Promise<unknown[]> {
  const cwd = new URL('../..', import.meta.url).pathname
  const runs = Array.from({ length: count }, (_, i) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args(i)], {
      cwd,
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    let output = ''
    const ready = new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8')
        if (output.startsWith('ready\n')) resolve()
      })
    })
    const done = new Promise<unknown>((resolve, reject) => {
      child.on('error', reject)
      child.on('exit', (code) => {
        const last = output.trim().split('\n').pop() ?? ''
        if (code === 0) resolve(JSON.parse(last))
        else reject(new Error(`race child ${i} exited with ${code}: ${output}`))
      })
    })
    return { child, ready, done }
  })
  await Promise.race([Promise.all(runs.map((run) => run.ready)), ...runs.map((run) => run.done)])
  for (const run of runs) run.child.stdin.end('go\n')
  return Promise.all(runs.map((run) => run.done))
}

describe('FsObjectStore specifics', () => {
  let root: string
  let store: FsObjectStore

  beforeEach(async () => {
    root = await tempRoot()
    store = new FsObjectStore({ root })
  })
  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  it('rejects keys that could escape the root or alias another key', async () => {
    const bad = [
      '',
      '/abs',
      'a/../b',
      '..',
      'a/./b',
      'a\\b',
      'a\0b',
      'a//b',
      'a/',
      '.turnline-fs/x',
    ]
    for (const key of bad) {
      await expect(store.get(key), key).rejects.toMatchObject({ code: 'invalid_input' })
      await expect(store.put(key, encode('x')), key).rejects.toMatchObject({
        code: 'invalid_input',
      })
      await expect(store.delete(key), key).rejects.toMatchObject({ code: 'invalid_input' })
    }
    expect((await store.list('../')).objects).toEqual([])
    expect(await filesUnder(root)).toEqual([])
  })

  it('stores objects as plain files and prunes empty folders on delete', async () => {
    await store.put('t/w/.vtcode/sessions/s1/log/0000000001.json', encode('{"batch":1}'))
    expect(await filesUnder(root)).toEqual(['t/w/.vtcode/sessions/s1/log/0000000001.json'])
    await store.delete('t/w/.vtcode/sessions/s1/log/0000000001.json')
    expect(await readdir(root)).toEqual(['.turnline-fs'])
  })

  it('uses a content hash as etag and rejects folder/object collisions', async () => {
    const a = await store.put('k', encode('same'))
    const b = await store.put('k', encode('same'))
    expect(b.etag).toBe(a.etag)
    await store.put('dir/child', encode('x'))
    await expect(store.put('dir', encode('y'))).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(store.put('dir', encode('y'), { ifNoneMatch: '*' })).rejects.toMatchObject({
      code: 'invalid_input',
    })
    await expect(store.put('k/child', encode('z'))).rejects.toMatchObject({ code: 'invalid_input' })
    expect(await store.get('dir')).toBeNull()
    expect(await store.get('k/child')).toBeNull()
    await store.delete('dir')
    expect(decode((await store.get('dir/child'))!.body)).toBe('x')
  })

  it('takes over a lock whose holder died (not refreshed), and times out on a live one', async () => {
    const { etag } = await store.put('m.json', encode('v1'))
    const lock = fsLockPath(store, 'm.json')
    // A holder that died leaves its lock directory behind, no longer refreshed.
    await mkdir(lock)
    const old = new Date(Date.now() - 60_000)
    await utimes(lock, old, old)
    await store.put('m.json', encode('v2'), { ifMatch: etag })
    expect(decode((await store.get('m.json'))!.body)).toBe('v2')

    const impatient = new FsObjectStore({ root, lock: { timeoutMs: 200 } })
    await mkdir(lock)
    const started = Date.now()
    await expect(impatient.put('m.json', encode('v3'))).rejects.toMatchObject({
      code: 'storage_unavailable',
      retryable: true,
    })
    expect(Date.now() - started).toBeGreaterThanOrEqual(190)
    await rm(lock, { recursive: true })
    await impatient.put('m.json', encode('v3'))
    expect(await filesUnder(join(root, '.turnline-fs'))).toEqual([])
  })

  it('a holder keeps its lock fresh, so a slow holder is not taken over', async () => {
    await store.put('slow.json', encode('v1'))
    const lock = fsLockPath(store, 'slow.json')
    // The holder keeps the lock until the test has tried to take it over.
    const entered = gate()
    const done = gate()
    onTestFinished(done.open)
    const held = withFileLock(lock, { timeoutMs: 10_000, staleMs: 2000 }, async () => {
      entered.open()
      await done.promise
      return 'done'
    })
    await entered.promise
    // Real time: the subject is the lock directory's mtime on a real file system.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    // Another process's attempt (no in-memory queue): the lock is older than staleMs, but
    // refreshed, so it is not stale.
    await expect(
      lockfile.lock(lock, { lockfilePath: lock, realpath: false, stale: 2000, retries: 0 }),
    ).rejects.toMatchObject({ code: 'ELOCKED' })
    done.open()
    expect(await held).toBe('done')
    await expect(stat(lock)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('lets exactly one of 8 processes win a create-only race', { timeout: 60_000 }, async () => {
    const results = await raceChildren(
      (i) => ['create', root, 'race/log/0000000001.json', String(i)],
      8,
    )
    const outcomes = results.map((r) => (r as { outcome: string }).outcome)
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'conflict')).toHaveLength(7)
    const winner = outcomes.indexOf('ok')
    expect(decode((await store.get('race/log/0000000001.json'))!.body)).toBe(`writer ${winner}`)
    expect(await filesUnder(join(root, '.turnline-fs'))).toEqual([])
  })

  it('lets exactly one of 8 processes win a compare-and-swap race', {
    timeout: 60_000,
  }, async () => {
    const { etag } = await store.put('race/manifest.json', encode('base'))
    const results = await raceChildren(
      (i) => ['cas', root, 'race/manifest.json', String(i), etag],
      8,
    )
    const outcomes = results.map((r) => (r as { outcome: string }).outcome)
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'conflict')).toHaveLength(7)
    const winner = outcomes.indexOf('ok')
    expect(decode((await store.get('race/manifest.json'))!.body)).toBe(`update ${winner}`)
  })

  it('loses no update when 8 processes increment one counter with CAS', {
    timeout: 60_000,
  }, async () => {
    const results = await raceChildren((i) => ['increment', root, 'counter', String(i), '15'], 8)
    const conflicts = results.reduce(
      (sum: number, r) => sum + (r as { conflicts: number }).conflicts,
      0,
    )
    expect(decode((await store.get('counter'))!.body)).toBe('120')
    expect(conflicts).toBeGreaterThan(0)
    expect(await filesUnder(join(root, '.turnline-fs'))).toEqual([])
    expect((await stat(join(root, 'counter'))).size).toBe(3)
  })
})
