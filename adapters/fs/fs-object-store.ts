/**
 * Filesystem ObjectStore, the embedded default: each object is the file `<root>/<key>`.
 *
 * - Etag: the quoted sha256 hex of the bytes. Identical bytes give the same etag, which is safe
 *   for compare-and-swap: a writer whose expected content is still there loses nothing.
 * - Every write first goes to a temp file in `<root>/.turnline-fs/tmp` (same filesystem), written
 *   on a writer thread (fs-writer-threads.ts), then: create-only `link()`s it to the final name
 *   (on the same thread; atomic, fails with EEXIST across processes; fs-place.ts), and
 *   the temp name is removed while the folder is fsynced; plain and `ifMatch` puts `rename()` it
 *   over the final name while holding the key's lock file (so a compare-and-swap can never
 *   interleave with another writer or a delete, in any process). The lock is acquired while the
 *   temp file is being written; the compare and the rename happen only once both are done.
 * - Readers never see partial bodies: names only ever point at complete files.
 * - Durability (`durable`, the default): the temp file's bytes are fsynced before it gets its
 *   name, so after a crash a name never points at torn bytes. A write that makes a new name — a
 *   create-only put (the session log's commit point) or a plain put — is durable when it
 *   returns: the folder that holds the name is fsynced, and so is the parent of every folder the
 *   write had to create. The holding folder is fsynced through a kept handle that is checked to
 *   still name that folder (fs-folder-handles.ts). A folder fsync that fails is an error, unless
 *   the platform cannot fsync folders at all (fs-durability.ts). A plain put's folder is fsynced
 *   while its lock is released. An `ifMatch` put replaces an existing name atomically; its
 *   folder is not fsynced, so after a crash (power loss) it may read as the previous version —
 *   which a compare-and-swapped object must tolerate anyway (the session store re-checks the
 *   manifest against the log and the rolled-up events against the manifest). One fsync per
 *   replace, two per new name (plus one per folder created).
 * - Appends (fs-append.ts) write into the object's file in place (no temp file, no lock) and
 *   fsync it; a reader may see one in progress as a partial last line. `version` (inode and
 *   birth time, reported by gets and puts) changes when a put replaces the file.
 * - Delete removes the file under the key's lock, then prunes empty parent folders.
 * - A key cannot be both an object and a folder of other keys (`a` and `a/b`): such a write is
 *   rejected with 'invalid_input'.
 */
import { createHash } from 'node:crypto'
import { lstat, mkdir, open, rmdir, unlink } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { TurnlineError } from '../../src/contract/errors.ts'
import type {
  AppendOptions,
  AppendResult,
  ListOptions,
  ListPage,
  ObjectStore,
  PutOptions,
  StoredObject,
} from '../../src/ports/object-store.ts'
import {
  checkAppendOptions,
  checkPutOptions,
  collectPage,
  planListing,
} from '../../src/ports/object-store-listing.ts'
import { appendToFile } from './fs-append.ts'
import { settleAll, syncNewName } from './fs-durability.ts'
import { forgetFolder } from './fs-folder-handles.ts'
import { errnoOf, keyPath, storageError, WORK_DIR } from './fs-key-path.ts'
import { DEFAULT_LOCK_TIMINGS, type LockTimings, withFileLock } from './fs-lock.ts'
import { placeTemp } from './fs-place.ts'
import { removeTemp, sweepTemps } from './fs-temp-file.ts'
import { walkKeys } from './fs-walk.ts'
import { type TempWritten, warmWriterThreads, writeOnThread } from './fs-writer-threads.ts'

export interface FsObjectStoreOptions {
  /** Folder holding the objects; created on first use. */
  root: string
  /** fsync what a write needs to be durable (default true; see the file comment). */
  durable?: boolean
  /** Lock timings for compare-and-swap, plain puts and deletes. */
  lock?: Partial<LockTimings>
}

export class FsObjectStore implements ObjectStore {
  readonly root: string
  readonly #durable: boolean
  readonly #lock: LockTimings
  readonly #tmpDir: string
  #ready: Promise<void> | undefined

  constructor(options: FsObjectStoreOptions) {
    this.root = resolve(options.root)
    this.#durable = options.durable ?? true
    this.#lock = { ...DEFAULT_LOCK_TIMINGS, ...options.lock }
    this.#tmpDir = join(this.root, WORK_DIR, 'tmp')
  }

  async get(key: string): Promise<StoredObject | null> {
    const path = keyPath(this.root, key)
    let data: Buffer
    let version: string
    try {
      // The version is read from the file that is read (a put may replace the name meanwhile).
      const handle = await open(path, 'r')
      try {
        const info = await handle.stat({ bigint: true })
        if (info.isDirectory()) return null
        version = `${info.ino}.${info.birthtimeNs}`
        data = await handle.readFile()
      } finally {
        await handle.close()
      }
    } catch (error) {
      const errno = errnoOf(error)
      if (errno === 'ENOENT' || errno === 'ENOTDIR' || errno === 'EISDIR') return null
      throw storageError(error, 'read', key)
    }
    const body = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    return { body, etag: etagOf(body), version }
  }

  async put(
    key: string,
    body: Uint8Array,
    options: PutOptions = {},
  ): Promise<{ etag: string; version?: string }> {
    const path = keyPath(this.root, key)
    checkPutOptions(key, options)
    // A copy of our own (a Buffer's slice() would be a view): it is handed to a writer thread.
    const bytes = new Uint8Array(body)
    const etag = etagOf(bytes)
    await this.#prepare()
    const version =
      options.ifNoneMatch === '*'
        ? await this.#create(bytes, path, key)
        : await this.#replace(bytes, path, key, options.ifMatch)
    return version === undefined ? { etag } : { etag, version }
  }

  async append(key: string, bytes: Uint8Array, options: AppendOptions): Promise<AppendResult> {
    const path = keyPath(this.root, key)
    checkAppendOptions(key, options)
    await this.#prepare()
    return appendToFile(path, key, bytes, options, this.#durable)
  }

  /**
   * Create-only: the writer thread writes the temp file and links it to the new name (EEXIST if
   * taken, in any process); a missing parent folder is made here and the link retried.
   */
  async #create(
    bytes: Uint8Array<ArrayBuffer>,
    path: string,
    key: string,
  ): Promise<string | undefined> {
    const { temp, version, linkError } = await this.#writeTemp(bytes, key, path)
    let created: string | undefined
    if (linkError !== undefined) {
      try {
        created = await placeTemp(temp, path, key, 'link', linkError)
      } catch (error) {
        await removeTemp(temp)
        throw error
      }
    }
    // The temp name is not needed once the object has its own name (it plays no part in the
    // object's durability), so it is removed while the folder is fsynced.
    await settleAll([this.#syncNewName(path, key, created), removeTemp(temp)])
    return version
  }

  /**
   * Plain and compare-and-swap puts: rename the temp file over the name under the key's lock.
   * The temp file is written while the lock is being acquired (its bytes are fsynced before the
   * rename either way); a plain put's folder is fsynced while the lock is released.
   */
  async #replace(
    bytes: Uint8Array<ArrayBuffer>,
    path: string,
    key: string,
    ifMatch?: string,
  ): Promise<string | undefined> {
    const temp = this.#writeTemp(bytes, key)
    // Awaited below, under the lock or in `finally`; this only keeps a failure that comes while
    // the lock is still being acquired from counting as unhandled.
    temp.catch(() => undefined)
    let syncing: Promise<void> | undefined
    let renamed = false
    try {
      await withFileLock(this.#lockPath(key), this.#lock, async () => {
        const [written] = await Promise.all([
          temp,
          ifMatch === undefined ? undefined : this.#expect(path, key, ifMatch),
        ])
        const created = await placeTemp(written.temp, path, key, 'rename')
        renamed = true
        // A compare-and-swap replaces an existing name; a plain put may make a new one.
        if (ifMatch === undefined) {
          syncing = this.#syncNewName(path, key, created)
          syncing.catch(() => undefined)
        }
      })
      await syncing
    } finally {
      if (!renamed) {
        const written = await temp.catch(() => undefined)
        if (written !== undefined) await removeTemp(written.temp)
      }
    }
    return (await temp).version
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const plan = planListing(prefix, options)
    return collectPage(plan, walkKeys(this.root, plan))
  }

  async delete(key: string): Promise<void> {
    const path = keyPath(this.root, key)
    await this.#prepare()
    const removed = await withFileLock(this.#lockPath(key), this.#lock, async () => {
      try {
        if ((await lstat(path)).isDirectory()) return false
        await unlink(path)
        return true
      } catch (error) {
        const errno = errnoOf(error)
        if (errno === 'ENOENT' || errno === 'ENOTDIR') return false
        throw storageError(error, 'delete', key)
      }
    })
    if (removed) await this.#prune(dirname(path))
  }

  /** Compare-and-swap check, run under the key's lock. */
  async #expect(path: string, key: string, ifMatch: string): Promise<void> {
    const current = await this.get(key)
    if (current === null) {
      throw new TurnlineError('not_found', 'No object to replace', { logDetails: { key } })
    }
    if (current.etag !== ifMatch) {
      throw new TurnlineError('conflict', 'Object changed since it was read', {
        logDetails: { key, path },
      })
    }
  }

  /** With durability on, makes the new name at `path` (and any folder created for it) durable. */
  async #syncNewName(path: string, key: string, created: string | undefined): Promise<void> {
    if (!this.#durable) return
    await syncNewName(dirname(path), created).catch((error: unknown) => {
      throw storageError(error, 'sync', key)
    })
  }

  async #writeTemp(
    bytes: Uint8Array<ArrayBuffer>,
    key: string,
    linkTo?: string,
  ): Promise<TempWritten> {
    try {
      return await writeOnThread({ tmpDir: this.#tmpDir, bytes, durable: this.#durable, linkTo })
    } catch (error) {
      throw storageError(error, 'write', key)
    }
  }

  /** Removes empty folders from `dir` up to (not including) the root. */
  async #prune(dir: string): Promise<void> {
    while (dir.startsWith(this.root) && dir.length > this.root.length) {
      try {
        await rmdir(dir)
      } catch {
        return
      }
      forgetFolder(dir)
      dir = dirname(dir)
    }
  }

  #lockPath(key: string): string {
    return fsLockPath(this, key)
  }

  #prepare(): Promise<void> {
    this.#ready ??= this.#setUp().catch((error: unknown) => {
      this.#ready = undefined
      throw storageError(error, 'setup', this.root)
    })
    return this.#ready
  }

  async #setUp(): Promise<void> {
    warmWriterThreads()
    await mkdir(this.#tmpDir, { recursive: true })
    await mkdir(dirname(fsLockPath(this, '')), { recursive: true })
    await sweepTemps(this.#tmpDir)
  }
}

/** Path of the lock file guarding `key` (exposed for tests of stale-lock recovery). */
export function fsLockPath(store: FsObjectStore, key: string): string {
  return join(
    store.root,
    WORK_DIR,
    'locks',
    `${createHash('sha256').update(key).digest('hex')}.lock`,
  )
}

function etagOf(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('hex')}"`
}
