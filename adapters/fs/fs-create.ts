/**
 * A create-only put of the fs store (the session log's commit point). The folder of the name is
 * held first (fs-folder-handles.ts: kept open, reached without following a link; made if
 * missing, a link on the way refused), then the writer thread writes the temp file and links it
 * through the folder's descriptor (EEXIST if the name is taken, in any process), then removes the
 * temp name (it plays no part in the object's durability once the object has its own name); a
 * folder removed meanwhile is held again and the link retried here. The name is made durable
 * through the same handle (the temp name removed beside it when the link was retried here, or
 * when its removal on the thread failed).
 *
 * Tried and not kept: the whole put on the writer thread (the folder opened and checked there,
 * its fsync made there too) — one message each way, but each put then held its thread through
 * two fsyncs, and turns got slower (docs/performance.md).
 */
import { basename, dirname } from 'node:path'
import { settleAll } from './fs-durability.ts'
import { holdKeyFolder, type Placed, placeTemp } from './fs-place.ts'
import { removeTemp } from './fs-temp-file.ts'
import type { HeldTemp } from './fs-work-folders.ts'

/** What a create-only put needs of its store. */
export interface CreateIo {
  /** Writes the put's bytes to a temp file (fs-work-folders.ts), linked to `linkTo`. */
  writeTemp(linkTo: string): Promise<HeldTemp>
  /** Makes the name made in the placed folder durable (and the folders made for it). */
  syncNewName(placed: Placed): Promise<void>
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
    written = await io.writeTemp(held.folder.child(name))
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
  // while the folder is fsynced.
  try {
    onNamed?.()
    const removing = written.removed === true ? [] : [removeTemp(written.temp)]
    await settleAll([io.syncNewName(placed), ...removing])
  } finally {
    placed.folder.release()
    written.release()
  }
  return written.version
}
