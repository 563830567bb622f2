/**
 * Giving a complete temp file its final name in the fs store, through the held folder of the name
 * (fs-folder-handles.ts: reached without following a link): `link()` for a create-only put
 * (fails if the name is taken, in any process), `rename()` over the name for the others — neither
 * follows a link at the name itself (a link there is a name like any other). A folder removed
 * since it was held (a concurrent delete pruned it) is held again, made anew, and the step
 * retried; each failure is translated into what it means for the key (a conflict, a key that
 * collides with a folder or an object, a link in the store, a fault).
 */
import { link, lstat, rename } from 'node:fs/promises'
import { TurnlineError } from '../../src/contract/errors.ts'
import { type HeldFolder, holdFolder } from './fs-folder-handles.ts'
import { collisionError, errnoOf, storageError } from './fs-key-path.ts'
import { SymlinkInStore } from './fs-no-follow.ts'

/** How often a write retries when a concurrent delete pruned its parent folder. */
const PARENT_RETRIES = 8

/** The folder a name was made in (still held: the caller releases it) and what was created. */
export interface Placed {
  folder: HeldFolder
  /** The topmost folder made for the name, if any. */
  created: string | undefined
}

/** A link where the store expects its own folder or object: the write is refused. */
export function symlinkError(key: string, cause: SymlinkInStore | undefined): TurnlineError {
  return new TurnlineError(
    'corrupt_data',
    'The store holds a symbolic link on the way to this object; the store never follows one',
    { logDetails: { key, ...(cause ? { at: cause.at } : {}) }, cause },
  )
}

/**
 * Holds the folder `dir` of `key`; with `create`, makes the missing folders. A link on the way is
 * refused (corrupt_data), an object where a folder should be is a collision; a missing folder
 * (without `create`) rejects with its ENOENT error for the caller to read as "absent".
 */
export async function holdKeyFolder(
  root: string,
  dir: string,
  key: string,
  create: boolean,
): Promise<Placed> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await holdFolder(root, dir, { create })
    } catch (error) {
      // A folder made on the way was pruned (an empty folder's last object deleted) before it
      // was opened: make it again.
      if (create && errnoOf(error) === 'ENOENT' && attempt < CREATE_ATTEMPTS) continue
      throw keyFolderError(error, key, create)
    }
  }
}

/** How often a folder pruned while it was being made is made again before the write fails. */
const CREATE_ATTEMPTS = 5

function keyFolderError(error: unknown, key: string, create: boolean): unknown {
  if (error instanceof SymlinkInStore) return symlinkError(key, error)
  const errno = errnoOf(error)
  if (errno === 'ENOENT' && !create) return error
  if (errno === 'ENOTDIR' || errno === 'EEXIST') return collisionError(key, 'object', error)
  return storageError(error, create ? 'mkdir' : 'open', key)
}

/**
 * Links or renames the complete temp file onto `name` in the held folder (`first`); `failed`:
 * the first attempt was made already (on the writer thread) and failed so. Returns the folder
 * the name was made in, still held; on failure every folder is released.
 */
export async function placeTemp(
  root: string,
  temp: string,
  name: string,
  key: string,
  how: 'link' | 'rename',
  first: Placed,
  failed?: unknown,
): Promise<Placed> {
  let { folder, created } = first
  let error = failed
  try {
    for (let attempt = 0; attempt < PARENT_RETRIES; attempt++) {
      if (error === undefined) {
        try {
          const to = folder.child(name)
          await (how === 'link' ? link(temp, to) : rename(temp, to))
          return { folder, created }
        } catch (caught) {
          error = caught
        }
      }
      if (errnoOf(error) !== 'ENOENT' || !(await folder.stale())) {
        throw await meaning(error, folder, name, key, how)
      }
      // The folder was removed since it was held: hold it again, making it anew (a released
      // folder's release below is a no-op).
      folder.discard()
      const again = await holdKeyFolder(root, folder.path, key, true)
      folder = again.folder
      created = again.created ?? created
      error = undefined
    }
    throw new TurnlineError('storage_unavailable', 'Parent folder kept vanishing', {
      logDetails: { key },
    })
  } catch (thrown) {
    folder.release()
    throw thrown
  }
}

async function meaning(
  error: unknown,
  folder: HeldFolder,
  name: string,
  key: string,
  how: 'link' | 'rename',
): Promise<TurnlineError> {
  const errno = errnoOf(error)
  if (errno === 'EEXIST' && how === 'link') {
    const there = await lstat(folder.child(name)).catch(() => undefined)
    if (there?.isDirectory()) return collisionError(key, 'folder', error)
    if (there?.isSymbolicLink()) return symlinkError(key, undefined)
    return new TurnlineError('conflict', 'Object already exists', { logDetails: { key } })
  }
  if (errno === 'EISDIR' || errno === 'ENOTEMPTY' || errno === 'EEXIST') {
    return collisionError(key, 'folder', error)
  }
  if (errno === 'ENOTDIR') return collisionError(key, 'object', error)
  return storageError(error, 'write', key)
}
