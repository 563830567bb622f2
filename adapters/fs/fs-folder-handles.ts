/**
 * Open handles on the folders the fs store recently made new names in, so that making a name
 * durable costs one fsync instead of open + fsync + close. Shared by every store in the process
 * and bounded (least recently used handles are closed), so descriptors stay few.
 *
 * A cached handle can outlive the folder it was opened on: a delete prunes an empty folder, and a
 * later write makes a new folder with the same path. An fsync through the old handle would make
 * nothing durable, so every fsync through a cached handle is checked, and the handle is trusted
 * only if the path still names the folder the handle has open:
 *
 * - the handle keeps its folder's inode allocated, so while it is open no other folder on that
 *   device can carry the same inode number (true of local filesystems; a network filesystem
 *   whose server reuses a number deleted by another client is outside what this store is for);
 * - a removed folder never comes back (the store only makes and removes folders, never renames
 *   them), so if `stat(path)`, started after the new name was made, shows the handle's device and
 *   inode, the path named that same folder all along — and the name was made in it (a folder
 *   moved by hand meanwhile would mislead an `open(path)` after the write just the same);
 * - the fsync and the stat run together; the fsync flushes every entry made before it started.
 *
 * When the check fails (or the stat does), the handle is closed and the folder is opened afresh
 * and fsynced, as without a cache. A handle is closed only once no fsync is using it; new fsyncs
 * never pick up a handle once it is dropped.
 */
import type { BigIntStats } from 'node:fs'
import { type FileHandle, open, stat } from 'node:fs/promises'

/** Most folder handles kept open per process. */
export const MAX_FOLDER_HANDLES = 32

interface Entry {
  handle: FileHandle
  dev: bigint
  ino: bigint
  users: number
  evicted: boolean
}

/** Path → handle, least recently used first. */
const entries = new Map<string, Entry>()

/** fsyncs the folder at `dir` (the folder a new name was just made in). */
export async function syncFolder(dir: string): Promise<void> {
  const entry = entries.get(dir)
  if (entry !== undefined && !entry.evicted) {
    entries.delete(dir)
    entries.set(dir, entry)
    entry.users++
    let confirmed = false
    try {
      const [, now] = await Promise.all([
        entry.handle.sync(),
        stat(dir, { bigint: true }).catch(() => undefined),
      ])
      confirmed = now !== undefined && sameFolder(now, entry)
    } finally {
      entry.users--
      // A failed fsync, or a path that names another folder now (or none): drop the handle.
      if (!confirmed) evict(dir, entry)
      else if (entry.evicted && entry.users === 0) close(entry)
    }
    if (confirmed) return
  }
  await syncFresh(dir)
}

/** Closes the handle kept for `dir`, if any (its folder was removed). */
export function forgetFolder(dir: string): void {
  const entry = entries.get(dir)
  if (entry !== undefined) evict(dir, entry)
}

/** Device and inode of the folder the handle kept for `dir` has open (for tests). */
export function cachedFolderIdentity(dir: string): { dev: bigint; ino: bigint } | undefined {
  const entry = entries.get(dir)
  return entry === undefined ? undefined : { dev: entry.dev, ino: entry.ino }
}

/** Number of folder handles kept open (for tests). */
export function cachedFolderCount(): number {
  return entries.size
}

async function syncFresh(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  let info: BigIntStats | undefined
  try {
    ;[, info] = await Promise.all([handle.sync(), handle.stat({ bigint: true })])
  } catch (error) {
    await handle.close()
    throw error
  }
  // An inode number of 0 means the platform does not report one: nothing to check against.
  if (info.ino === 0n || entries.has(dir)) {
    await handle.close()
    return
  }
  entries.set(dir, { handle, dev: info.dev, ino: info.ino, users: 0, evicted: false })
  const oldest = entries.keys().next().value
  if (entries.size > MAX_FOLDER_HANDLES && oldest !== undefined) forgetFolder(oldest)
}

function sameFolder(now: BigIntStats, entry: Entry): boolean {
  return now.isDirectory() && now.dev === entry.dev && now.ino === entry.ino
}

function evict(dir: string, entry: Entry): void {
  if (entries.get(dir) === entry) entries.delete(dir)
  if (entry.evicted) return
  entry.evicted = true
  if (entry.users === 0) close(entry)
}

function close(entry: Entry): void {
  // A read-only folder handle whose fsyncs have all completed holds nothing to lose: a failure
  // to close it can only leak the descriptor.
  entry.handle.close().catch(() => undefined)
}
