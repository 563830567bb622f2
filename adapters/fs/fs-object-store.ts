/**
 * Filesystem ObjectStore, the embedded default: each object is the file `<root>/<key>`.
 *
 * - Etag: the quoted sha256 hex of the bytes. Identical bytes give the same etag, which is safe
 *   for compare-and-swap: a writer whose expected content is still there loses nothing.
 * - Every write first goes to a temp file in `<root>/.turnline-fs/tmp` (same filesystem), written
 *   on a writer thread (fs-writer-threads.ts), then: create-only `link()`s it to the final name
 *   (on the same thread; atomic, fails with EEXIST across processes; fs-place.ts), removes
 *   the temp name and fsyncs the folder (fs-create.ts); plain and `ifMatch` puts `rename()` it
 *   over the final name while holding the key's lock file (so a compare-and-swap can never
 *   interleave with another writer or a delete, in any process; fs-replace.ts: a
 *   compare-and-swap's compare and rename are one writer-thread request). The lock is acquired
 *   while the temp file is being written; the compare and the rename happen only once both are
 *   done.
 * - Readers never see partial bodies: names only ever point at complete files.
 * - Durability (`durable`, the default): the temp file's bytes are fsynced before it gets its
 *   name, so after a crash a name never points at torn bytes. A write that makes a new name — a
 *   create-only put (the session log's commit point) or a plain put — is durable when it
 *   returns: the folder that holds the name is fsynced, and so is the parent of every folder the
 *   write had to create. The holding folder is fsynced through the kept handle the name was made
 *   through (fs-folder-handles.ts). A folder fsync that fails is an error, unless
 *   the platform cannot fsync folders at all (fs-durability.ts). A plain put's folder is fsynced
 *   while its lock is released. An `ifMatch` put replaces an existing name atomically; its
 *   folder is not fsynced, so after a crash (power loss) it may read as the previous version —
 *   which a compare-and-swapped object must tolerate anyway (the session store re-checks the
 *   manifest against the log and the rolled-up events against the manifest). One fsync per
 *   replace, two per new name (plus one per folder created).
 * - Appends (fs-append.ts) write into the object's file in place (no temp file, no lock), through
 *   its held folder and `O_NOFOLLOW` like every other write, and fsync it (unless asked not to:
 *   `durable: false`; an append of no bytes then only fsyncs); a reader may see one in progress
 *   as a partial last line. `version` (inode and birth time) changes when a put replaces the file.
 * - Delete removes the file under the key's lock, then prunes empty parent folders.
 * - No symbolic link below the root is ever followed (fs-no-follow.ts): every object is named
 *   through the descriptor of its folder, held open after the folder was reached without
 *   following a link, and opened `O_NOFOLLOW`. Reads and listings treat a link as absent; a write
 *   or delete that would go through one fails with corrupt_data; a link at an object's own name is
 *   a name like any other (a create-only put refuses it, a plain put or a delete replaces or
 *   removes the link itself, never its target). The store's working folders (temp files, locks)
 *   are held and used the same way (fs-work-folders.ts). Links in the root's own path are the
 *   operator's.
 * - A key cannot be both an object and a folder of other keys (`a` and `a/b`): such a write is
 *   rejected with 'invalid_input'.
 */
import { createHash } from 'node:crypto'
import { lstat, mkdir, realpath, unlink } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
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
} from '../shared/object-store-listing.ts'
import { appendToFile } from './fs-append.ts'
import { createOnly } from './fs-create.ts'
import { syncNewName } from './fs-durability.ts'
import { inKeyFolder, pruneFolders, readObjectFile } from './fs-key-folder.ts'
import { errnoOf, keyPath, storageError, WORK_DIR } from './fs-key-path.ts'
import { DEFAULT_LOCK_TIMINGS, type LockTimings } from './fs-lock.ts'
import { SymlinkInStore } from './fs-no-follow.ts'
import { type Placed, symlinkError } from './fs-place.ts'
import { replaceName } from './fs-replace.ts'
import { walkKeys } from './fs-walk.ts'
import { holdWorkFolder, lockName, sweepTemps, withKeyLock, writeTemp } from './fs-work-folders.ts'
import { warmWriterThreads } from './fs-writer-threads.ts'

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
  readonly allocationBytes = 4096 // the usual block of ext4, XFS, btrfs and APFS
  readonly #durable: boolean
  readonly #lock: LockTimings
  #ready: Promise<void> | undefined
  #real: string | undefined // the root's real path once it exists: folders below are reached from it

  constructor(options: FsObjectStoreOptions) {
    this.root = resolve(options.root)
    this.#durable = options.durable ?? true
    this.#lock = { ...DEFAULT_LOCK_TIMINGS, ...options.lock }
  }

  /** Sets the store up now, not at the first write (which meets a failure of it again). */
  prepareAhead(): void {
    this.#prepare().catch(() => {})
  }

  async get(key: string): Promise<StoredObject | null> {
    keyPath(this.root, key)
    const root = await this.#realRoot()
    if (root === undefined) return null
    const path = keyPath(root, key)
    const name = basename(path)
    const read = await inKeyFolder(root, dirname(path), key, 'absent', (folder) =>
      readObjectFile(folder.child(name), key),
    )
    if (read === undefined) return null
    return { body: read.body, etag: etagOf(read.body), version: read.version }
  }

  async put(
    key: string,
    body: Uint8Array,
    options: PutOptions = {},
  ): Promise<{ etag: string; version?: string }> {
    keyPath(this.root, key)
    checkPutOptions(key, options)
    // A copy of our own (a Buffer's slice() would be a view): it is handed to a writer thread.
    const bytes = new Uint8Array(body)
    const etag = etagOf(bytes)
    const root = await this.#prepare()
    const path = keyPath(root, key)
    const temp = (linkTo?: string, syncFolder?: number) =>
      writeTemp(root, body, bytes, this.#durable, key, linkTo, syncFolder)
    const version =
      options.ifNoneMatch === '*'
        ? await createOnly(
            {
              writeTemp: temp,
              syncNewName: (placed, own) => this.#syncNewName(root, placed, key, own),
            },
            root,
            path,
            key,
            options.onNamed,
          )
        : await replaceName(
            {
              withLock: (fn) => withKeyLock(root, key, this.#lockPath(key), this.#lock, fn),
              expect: (ifMatch) => this.#expect(path, key, ifMatch),
              syncNewName: (placed) => this.#syncNewName(root, placed, key),
            },
            temp(),
            root,
            path,
            key,
            options.ifMatch,
          )
    return version === undefined ? { etag } : { etag, version }
  }

  async append(key: string, bytes: Uint8Array, options: AppendOptions): Promise<AppendResult> {
    keyPath(this.root, key)
    checkAppendOptions(key, options)
    const root = await this.#prepare()
    return appendToFile(root, keyPath(root, key), key, bytes, options, this.#durable)
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const plan = planListing(prefix, options)
    return collectPage(plan, walkKeys(await this.#realRoot(), plan))
  }

  async delete(key: string): Promise<void> {
    keyPath(this.root, key)
    const root = await this.#prepare()
    const path = keyPath(root, key)
    const name = basename(path)
    const removed = await withKeyLock(root, key, this.#lockPath(key), this.#lock, () =>
      inKeyFolder(root, dirname(path), key, 'refuse', async (folder) => {
        // A link at the name is a name like any other: it is removed, never followed.
        const there = await lstat(folder.child(name)).catch((error: unknown) => {
          if (errnoOf(error) === 'ENOENT' || errnoOf(error) === 'ENOTDIR') return undefined
          throw storageError(error, 'delete', key)
        })
        if (there === undefined) return undefined
        if (there.isDirectory()) return false
        await unlink(folder.child(name)).catch((error: unknown) => {
          if (errnoOf(error) !== 'ENOENT') throw storageError(error, 'delete', key)
        })
        return true
      }),
    )
    if (removed === true) await pruneFolders(root, dirname(path))
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

  /** With durability on, makes the new name (and any folder created for it) durable. */
  async #syncNewName(root: string, placed: Placed, key: string, own?: Promise<void>) {
    if (!this.#durable) return
    await syncNewName(root, placed.folder, placed.created, own).catch((error: unknown) => {
      // A link swapped in on the way to a folder made for the name: the name was made in the
      // store's own folder, but cannot be made durable through the link.
      if (error instanceof SymlinkInStore) throw symlinkError(key, error)
      throw storageError(error, 'sync', key)
    })
  }

  #lockPath(key: string): string {
    return fsLockPath(this, key)
  }

  /** The root's real path; undefined while the root does not exist (nothing is stored yet). */
  async #realRoot(): Promise<string | undefined> {
    if (this.#real === undefined) {
      const real = await realpath(this.root).catch((error: unknown) => {
        if (errnoOf(error) === 'ENOENT') return undefined
        throw storageError(error, 'setup', this.root)
      })
      this.#real ??= real
    }
    return this.#real
  }

  /** Sets the store up once (the root, its working folders); resolves the real root. */
  async #prepare(): Promise<string> {
    this.#ready ??= this.#setUp().catch((error: unknown) => {
      this.#ready = undefined
      throw isTurnlineError(error) ? error : storageError(error, 'setup', this.root)
    })
    await this.#ready
    const root = await this.#realRoot()
    if (root === undefined) throw storageError(new Error('root vanished'), 'setup', this.root)
    return root
  }

  async #setUp(): Promise<void> {
    warmWriterThreads()
    await mkdir(this.root, { recursive: true })
    const root = await realpath(this.root)
    // The working folders are made (and checked afresh) without following a link below the root.
    ;(await holdWorkFolder(root, 'locks', WORK_DIR, true)).release()
    await sweepTemps(root)
  }
}

/** Path of the lock file guarding `key` (exposed for tests of stale-lock recovery). */
export function fsLockPath(store: FsObjectStore, key: string): string {
  return join(store.root, WORK_DIR, 'locks', lockName(key))
}

function etagOf(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('hex')}"`
}
