/**
 * Giving a complete temp file its final name in the fs store: `link()` for a create-only put
 * (fails if the name is taken, in any process), `rename()` over the name for the others; missing
 * parent folders are made and the step retried, and each failure is translated into what it
 * means for the key (a conflict, a key that collides with a folder or an object, a fault).
 */
import { link, lstat, mkdir, rename } from 'node:fs/promises'
import { dirname } from 'node:path'
import { TurnlineError } from '../../src/contract/errors.ts'
import { collisionError, errnoOf, storageError } from './fs-key-path.ts'

/** How often a write retries when a concurrent delete pruned its parent folder. */
const PARENT_RETRIES = 8

/**
 * Links or renames the complete temp file onto its final name, creating parent folders;
 * returns the topmost folder it had to create, if any. `failed`: the first attempt was made
 * already (on the writer thread) and failed so.
 */
export async function placeTemp(
  temp: string,
  path: string,
  key: string,
  how: 'link' | 'rename',
  failed?: unknown,
): Promise<string | undefined> {
  let created: string | undefined
  let error = failed
  for (let attempt = 0; attempt < PARENT_RETRIES; attempt++) {
    if (error === undefined) {
      try {
        await (how === 'link' ? link(temp, path) : rename(temp, path))
        return created
      } catch (caught) {
        error = caught
      }
    }
    created = (await parentsAfter(error, path, key, how)) ?? created
    error = undefined
  }
  throw new TurnlineError('storage_unavailable', 'Parent folder kept vanishing', {
    logDetails: { key },
  })
}

/**
 * After a failed link or rename: makes the missing parent folders (ENOENT) and returns the
 * topmost one it created, if any; any other failure is thrown as what it means for the key.
 */
export async function parentsAfter(
  error: unknown,
  path: string,
  key: string,
  how: 'link' | 'rename',
): Promise<string | undefined> {
  const errno = errnoOf(error)
  if (errno === 'EEXIST' && how === 'link') {
    if (await isDirectory(path)) throw collisionError(key, 'folder', error)
    throw new TurnlineError('conflict', 'Object already exists', { logDetails: { key } })
  }
  if (errno === 'EISDIR' || errno === 'ENOTEMPTY' || errno === 'EEXIST') {
    throw collisionError(key, 'folder', error)
  }
  if (errno === 'ENOTDIR') throw collisionError(key, 'object', error)
  if (errno !== 'ENOENT') throw storageError(error, 'write', key)
  return await makeParents(path, key)
}

/** Creates the folders above `path`; returns the topmost one it created, if any. */
async function makeParents(path: string, key: string): Promise<string | undefined> {
  try {
    return await mkdir(dirname(path), { recursive: true })
  } catch (error) {
    const errno = errnoOf(error)
    if (errno === 'ENOTDIR' || errno === 'EEXIST') throw collisionError(key, 'object', error)
    throw storageError(error, 'mkdir', key)
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined))?.isDirectory() ?? false
}
