/**
 * A create-only put of the fs store (the session log's commit point). Where folders are reached
 * through descriptors (fs-no-follow.ts), the writer thread does the whole put in one request: the
 * temp file, the folder opened without following a link and checked, the link through its
 * descriptor (EEXIST if the name is taken, in any process), the folder's fsync, the temp name
 * removed. When it cannot (a folder is missing or not what it should be, the name is taken), the
 * folder is held here — made if missing, a link on the way refused — and the link made or its
 * failure explained. Without descriptor paths the folder is held (checked by path) first and the
 * thread links to its path.
 */
import { basename, dirname } from 'node:path'
import { settleAll } from './fs-durability.ts'
import { errnoOf, storageError } from './fs-key-path.ts'
import { descriptorPaths } from './fs-no-follow.ts'
import { holdKeyFolder, type Placed, placeTemp } from './fs-place.ts'
import { removeTemp } from './fs-temp-file.ts'
import type { TempWritten } from './fs-writer-threads.ts'

/** What a create-only put needs of its store. */
export interface CreateIo {
  writeTemp(
    bytes: Uint8Array<ArrayBuffer>,
    key: string,
    linkTo?: string,
    into?: { dir: string; name: string },
  ): Promise<TempWritten>
  /** Makes the name made in the placed folder durable (and the folders made for it). */
  syncNewName(root: string, placed: Placed, key: string): Promise<void>
}

/** Makes `path` (under the real `root`) hold `bytes`, unless the name is taken (conflict). */
export async function createOnly(
  io: CreateIo,
  bytes: Uint8Array<ArrayBuffer>,
  root: string,
  path: string,
  key: string,
): Promise<void> {
  const dir = dirname(path)
  const name = basename(path)
  if (!(await descriptorPaths())) {
    const held = await holdKeyFolder(root, dir, key, true)
    await linkByPath(io, bytes, root, name, key, held)
    return
  }
  const written = await io.writeTemp(bytes, key, undefined, { dir, name })
  if (written.linked) {
    if (!written.tempRemoved) await removeTemp(written.temp)
    if (written.folderSyncError !== undefined) {
      throw storageError(written.folderSyncError, 'sync', key)
    }
    return
  }
  let held: Placed
  try {
    held = await holdKeyFolder(root, dir, key, true)
  } catch (error) {
    await removeTemp(written.temp)
    throw error
  }
  // A taken name is explained here; anything else is tried again through the held folder.
  const failed = errnoOf(written.linkError) === 'EEXIST' ? written.linkError : undefined
  await place(io, root, name, key, held, written.temp, false, failed)
}

/** Create-only by path (no descriptor paths): the thread links to the held folder's path. */
async function linkByPath(
  io: CreateIo,
  bytes: Uint8Array<ArrayBuffer>,
  root: string,
  name: string,
  key: string,
  held: Placed,
): Promise<void> {
  let written: TempWritten
  try {
    written = await io.writeTemp(bytes, key, held.folder.child(name))
  } catch (error) {
    held.folder.release()
    throw error
  }
  const linked = written.linkError === undefined
  await place(io, root, name, key, held, written.temp, linked, written.linkError)
}

/**
 * Gives the temp file its name in the held folder unless it has it (`linked`; `failed`: an
 * attempt already failed so), then makes the name durable and removes the temp name.
 */
async function place(
  io: CreateIo,
  root: string,
  name: string,
  key: string,
  held: Placed,
  temp: string,
  linked: boolean,
  failed?: unknown,
): Promise<void> {
  let placed = held
  if (!linked) {
    try {
      placed = await placeTemp(root, temp, name, key, 'link', held, failed)
    } catch (error) {
      await removeTemp(temp)
      throw error
    }
  }
  // The temp name is not needed once the object has its own name (it plays no part in the
  // object's durability), so it is removed while the folder is fsynced.
  try {
    await settleAll([io.syncNewName(root, placed, key), removeTemp(temp)])
  } finally {
    placed.folder.release()
  }
}
