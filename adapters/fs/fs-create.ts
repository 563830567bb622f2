/**
 * A create-only put of the fs store (the session log's commit point). The folder of the name is
 * held first (fs-folder-handles.ts: kept open, reached without following a link; made if
 * missing, a link on the way refused), then the writer thread writes the temp file and links it
 * through the folder's descriptor (EEXIST if the name is taken, in any process), then removes the
 * temp name (it plays no part in the object's durability once the object has its own name),
 * answers, and fsyncs the folder through the held descriptor, answered in a second message: the
 * caller acts on the name (`onNamed`) while the folder is fsynced, and no thread-pool job is
 * needed. A folder removed meanwhile is held again and the link retried here, and the name made
 * durable through the new handle here (the temp name removed beside it, as when its removal on
 * the thread failed). On Deno the thread cannot use the held descriptor (each thread has
 * descriptors of its own): its fsync fails with EBADF and the folder is fsynced here instead.
 *
 * Tried and not kept: the whole put answered once, after the folder's fsync on the thread (the
 * caller's appends then waited for it; turns got slower: docs/performance.md).
 */
import { basename, dirname } from 'node:path'
import { settleAll } from './fs-durability.ts'
import { errnoOf } from './fs-key-path.ts'
import { holdKeyFolder, type Placed, placeTemp } from './fs-place.ts'
import { removeTemp } from './fs-temp-file.ts'
import type { HeldTemp } from './fs-work-folders.ts'

/** What a create-only put needs of its store. */
export interface CreateIo {
  /**
   * Writes the put's bytes to a temp file (fs-work-folders.ts), linked to `linkTo`; the folder
   * whose descriptor is `syncFolder` (that of `linkTo`) fsynced after the link when the store
   * makes names durable.
   */
  writeTemp(linkTo: string, syncFolder: number): Promise<HeldTemp>
  /**
   * Makes the name made in the placed folder durable (and the folders made for it); `ownSync`:
   * the folder's own fsync, made already (its outcome).
   */
  syncNewName(placed: Placed, ownSync?: Promise<void>): Promise<void>
}

/**
 * Makes `path` (under the real `root`) hold the put's bytes, unless the name is taken (conflict);
 * returns the new object's version (its temp file's: a link keeps it).
 */
export async function createOnly(
  io: CreateIo,
  root: string,
  path: string,
  key: string,
  onNamed?: () => void,
): Promise<string | undefined> {
  const name = basename(path)
  const held = await holdKeyFolder(root, dirname(path), key, true)
  let written: HeldTemp
  try {
    written = await io.writeTemp(held.folder.child(name), held.folder.fd)
  } catch (error) {
    held.folder.release()
    throw error
  }
  let placed = held
  if (written.linkError !== undefined) {
    try {
      placed = await placeTemp(root, written.temp, name, key, 'link', held, written.linkError)
    } catch (error) {
      await removeTemp(written.temp).finally(() => written.release())
      throw error
    }
  }
  // The temp name is not needed once the object has its own name (it plays no part in the
  // object's durability): the writer thread removed it after the link, else it is removed here
  // while the folder is fsynced (here unless the thread did, through the handle still held).
  const synced = placed === held ? written.folderSync : undefined
  try {
    onNamed?.()
    const removing = written.removed === true ? [] : [removeTemp(written.temp)]
    const ownSync = synced?.then(({ error }) => {
      if (error === undefined) return
      // A descriptor the thread cannot use: on Deno each thread has descriptors of its own
      // (node:fs hands out resource ids), so the folder is fsynced here, through the held one.
      if (errnoOf(error) === 'EBADF') return placed.folder.sync()
      throw error
    })
    await settleAll([io.syncNewName(placed, ownSync), ...removing])
  } finally {
    placed.folder.release()
    written.release()
  }
  return written.version
}
