/**
 * A plain or compare-and-swap put of the fs store: the temp file renamed over the name (through
 * its folder's descriptor) under the key's lock (fs-lock.ts, fs-work-folders.ts). The temp file
 * is written while the lock is being acquired (its bytes are fsynced before the rename either
 * way); a plain put's folder is fsynced while the lock is released (it may make a new name), a
 * compare-and-swap's is not (it replaces one).
 *
 * A compare-and-swap (`ifMatch`: the session manifest, every 16 batches) compares and renames
 * in one writer-thread request (`op: 'replace'`, fs-writer-thread-source.ts): the current file
 * read through the held folder (never through a link), its etag compared, the temp file renamed
 * over it — one message each way instead of a thread-pool round trip per call (open, two
 * stats, read, close, rename). When the file cannot be read there (missing, a link, a fault),
 * the compare is made by `expect` as before, which says which, then the rename.
 */
import { basename, dirname } from 'node:path'
import { TurnlineError } from '../../src/contract/errors.ts'
import { holdKeyFolder, type Placed, placeTemp } from './fs-place.ts'
import { removeTemp } from './fs-temp-file.ts'
import type { HeldTemp } from './fs-work-folders.ts'
import { replaceOnThread } from './fs-writer-threads.ts'

/** What a replacing put needs of its store. */
export interface ReplaceIo {
  /** Runs `fn` holding the key's lock. */
  withLock<T>(fn: () => Promise<T>): Promise<T>
  /** The compare of a compare-and-swap (under the lock): not_found or conflict, else nothing. */
  expect(ifMatch: string): Promise<void>
  /** Makes a name made in the placed folder durable. */
  syncNewName(placed: Placed): Promise<void>
}

/** Replaces (or, without `ifMatch`, makes) `path`; the new object's version. */
export async function replaceName(
  io: ReplaceIo,
  temp: Promise<HeldTemp>,
  root: string,
  path: string,
  key: string,
  ifMatch?: string,
): Promise<string | undefined> {
  // Awaited below, under the lock or in `finally`; this only keeps a failure that comes while
  // the lock is still being acquired from counting as unhandled.
  temp.catch(() => undefined)
  let syncing: Promise<void> | undefined
  let renamed = false
  try {
    await io.withLock(async () => {
      if (ifMatch !== undefined && (await swapOnThread(await temp, root, path, key, ifMatch))) {
        renamed = true
        return
      }
      const [written] = await Promise.all([
        temp,
        ifMatch === undefined ? undefined : io.expect(ifMatch),
      ])
      const held = await holdKeyFolder(root, dirname(path), key, true)
      const placed = await placeTemp(root, written.temp, basename(path), key, 'rename', held)
      renamed = true
      // A compare-and-swap replaces an existing name; a plain put may make a new one.
      if (ifMatch === undefined) {
        syncing = io.syncNewName(placed).finally(() => placed.folder.release())
        syncing.catch(() => undefined)
      } else {
        placed.folder.release()
      }
    })
    await syncing
  } finally {
    const written = await temp.catch(() => undefined)
    if (!renamed && written !== undefined) await removeTemp(written.temp)
    written?.release()
  }
  return (await temp).version
}

/**
 * The compare and the rename on a writer thread, under the key's lock; false when the file there
 * could not be read as an object (the caller compares through `expect`, then renames). A failed
 * rename is met as `placeTemp` meets it (a folder made anew meanwhile, a collision).
 */
async function swapOnThread(
  written: HeldTemp,
  root: string,
  path: string,
  key: string,
  ifMatch: string,
): Promise<boolean> {
  const name = basename(path)
  const held = await holdKeyFolder(root, dirname(path), key, false).catch(() => undefined)
  if (held === undefined) return false
  let placing = false
  try {
    const done = await replaceOnThread(written.temp, held.folder.child(name), ifMatch)
    if ('mismatch' in done) {
      throw new TurnlineError('conflict', 'Object changed since it was read', {
        logDetails: { key, path },
      })
    }
    if ('unread' in done) return false
    if ('renameError' in done) {
      placing = true
      const placed = await placeTemp(
        root,
        written.temp,
        name,
        key,
        'rename',
        held,
        done.renameError,
      )
      placed.folder.release()
    }
    return true
  } finally {
    if (!placing) held.folder.release()
  }
}
