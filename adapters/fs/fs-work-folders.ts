/**
 * The fs store's working folders, `<root>/.turnline-fs/tmp` (every write's temp file) and
 * `<root>/.turnline-fs/locks` (a lock folder per key being replaced or deleted). They are held
 * like every folder of the store (fs-folder-handles.ts: reached without following a link, kept
 * open), and every temp file and lock is named through the held descriptor: a link planted in
 * place of either folder, or of `.turnline-fs`, before the store reached it is refused
 * (corrupt_data), and one planted after is never followed — no temp file or lock is ever made
 * outside the root.
 *
 * A folder is held for as long as a name made through its descriptor is in use (a temp file until
 * it has its final name or is removed, a lock until it is released), so the descriptor cannot be
 * closed and its number reused meanwhile. A held folder that was removed since it was opened
 * (nothing can be made in it: ENOENT) is dropped and held again, made anew, once per operation.
 */
import { createHash } from 'node:crypto'
import { lstat, readdir, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { type HeldFolder, holdFolder } from './fs-folder-handles.ts'
import { errnoOf, storageError, WORK_DIR } from './fs-key-path.ts'
import { type LockTimings, lockFolderMissing, withFileLock } from './fs-lock.ts'
import { SymlinkInStore } from './fs-no-follow.ts'
import { symlinkError } from './fs-place.ts'
import { type TempWritten, writeOnThread } from './fs-writer-threads.ts'

/** Temp files older than this are leftovers of a crash and are swept on first use. */
const TEMP_SWEEP_AGE_MS = 60 * 60 * 1000

export type WorkFolder = 'tmp' | 'locks'

/** `<root>/.turnline-fs/<which>`. */
export function workFolderPath(root: string, which: WorkFolder): string {
  return join(root, WORK_DIR, which)
}

/** The name of the lock folder guarding `key` in the locks folder. */
export function lockName(key: string): string {
  return `${createHash('sha256').update(key).digest('hex')}.lock`
}

/**
 * Holds the work folder `which` under the real `root`, made if missing; `fresh`: opened and
 * checked again even if a handle is kept (a store setting up). A link on the way is
 * corrupt_data, anything else in the way (a file) storage_unavailable, both for `key`.
 */
export async function holdWorkFolder(
  root: string,
  which: WorkFolder,
  key: string,
  fresh = false,
): Promise<HeldFolder> {
  try {
    return (await holdFolder(root, workFolderPath(root, which), { create: true, fresh })).folder
  } catch (error) {
    if (error instanceof SymlinkInStore) throw symlinkError(key, error)
    throw storageError(error, 'mkdir', key)
  }
}

/** A temp file written; its folder stays held until `release()` (once it is placed or removed). */
export interface HeldTemp extends TempWritten {
  release(): void
}

/**
 * Writes a temp file holding `bytes` (moved to a writer thread) in the tmp folder, linked to
 * `linkTo` if given (fs-writer-threads.ts), whose folder (the descriptor `syncFolder`) the thread
 * then fsyncs when `durable`. Should the tmp folder have been removed, it is held again and the
 * write repeated with a fresh copy of `body` (whose copy `bytes` is).
 */
export async function writeTemp(
  root: string,
  body: Uint8Array,
  bytes: Uint8Array<ArrayBuffer>,
  durable: boolean,
  key: string,
  linkTo?: string,
  syncFolder?: number,
): Promise<HeldTemp> {
  let tmp = await holdWorkFolder(root, 'tmp', key)
  for (let attempt = 0; ; attempt++) {
    try {
      const written = await writeOnThread({
        tmpDir: tmp.child(''),
        bytes: attempt === 0 ? bytes : new Uint8Array(body),
        durable,
        linkTo,
        syncFolder: durable ? syncFolder : undefined,
      })
      const held = tmp
      return { ...written, release: () => held.release() }
    } catch (error) {
      const gone = attempt === 0 && errnoOf(error) === 'ENOENT' && (await tmp.stale())
      if (!gone) {
        tmp.release()
        throw storageError(error, 'write', key)
      }
      tmp.discard()
      tmp = await holdWorkFolder(root, 'tmp', key)
    }
  }
}

/**
 * Runs `fn` holding the lock of `key` (fs-lock.ts), made in the locks folder through its
 * descriptor; `lockPath` names the lock by path (it queues the process's own contenders).
 */
export async function withKeyLock<T>(
  root: string,
  key: string,
  lockPath: string,
  timings: LockTimings,
  fn: () => Promise<T>,
): Promise<T> {
  let locks = await holdWorkFolder(root, 'locks', key)
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        return await withFileLock(lockPath, timings, fn, locks.child(lockName(key)))
      } catch (error) {
        if (attempt > 0 || !lockFolderMissing(error) || !(await locks.stale())) throw error
        locks.discard()
        locks = await holdWorkFolder(root, 'locks', key)
      }
    }
  } finally {
    locks.release()
  }
}

/**
 * Checks the tmp folder afresh (made if missing, a link refused) and removes the temp files left
 * over by a crash (older than an hour).
 */
export async function sweepTemps(root: string): Promise<void> {
  const tmp = await holdWorkFolder(root, 'tmp', WORK_DIR, true)
  try {
    const now = Date.now()
    for (const name of await readdir(tmp.child(''))) {
      const info = await lstat(tmp.child(name)).catch(() => undefined)
      if (info === undefined || info.isDirectory() || now - info.mtimeMs <= TEMP_SWEEP_AGE_MS) {
        continue
      }
      await unlink(tmp.child(name)).catch((error: unknown) => {
        if (errnoOf(error) !== 'ENOENT') throw error
      })
    }
  } finally {
    tmp.release()
  }
}
