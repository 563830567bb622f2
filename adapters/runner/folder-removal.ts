import { randomBytes } from 'node:crypto'
import { type FileHandle, open, opendir, rename, rmdir, unlink } from 'node:fs/promises'
import { at, FOLDER_FLAGS } from './workspace-walk.ts'

/** Folders held open at once by one removal; deeper folders are moved up first (see below). */
const MAX_HELD = 64
/** Passes over the top folder: each one removes MAX_HELD levels at least, or new entries came. */
const MAX_PASSES = 10_000

const code = (error: unknown) => (error as NodeJS.ErrnoException).code

/** Something kept writing into the folder while it was removed (see `removeFolder`). */
export class FolderKeepsChanging extends Error {
  override readonly name = 'FolderKeepsChanging'
}

/**
 * Removes the folder `name` of the folder held open as `parentFd`, and everything in it, without
 * following a single symlink and without looking any path up by name from anywhere but a folder
 * it holds: each folder is opened with O_DIRECTORY|O_NOFOLLOW relative to the one holding it
 * (`/proc/self/fd/<n>/<name>`, workspace-walk.ts), entries are removed with `unlink` and `rmdir`
 * in the held folder, which never follow the last component. A symlink is removed as a link and
 * whatever it points to is never touched; a name that turns from a folder into something else
 * meanwhile is removed as what it now is.
 *
 * At most MAX_HELD folders are open at once whatever the tree's depth: a folder deeper than that
 * is renamed to the top folder (`renameat` between two held folders) and removed from there on
 * a later pass. Asynchronous (the runner serves other requests meanwhile). Answers whether there
 * was anything to remove; idempotent.
 */
export async function removeFolder(parentFd: number, name: string): Promise<boolean> {
  const top = await openHeld(parentFd, name)
  if (top === undefined) return unlinkIn(parentFd, name)
  try {
    for (let pass = 0; await emptyOnce(top.fd, top.fd, 0); pass++) {
      if (pass >= MAX_PASSES) throw new FolderKeepsChanging(`${name} keeps getting new entries`)
    }
  } finally {
    await top.close()
  }
  try {
    await rmdir(at(parentFd, name))
  } catch (error) {
    if (code(error) !== 'ENOENT') throw error
  }
  return true
}

/** A folder entry of a held folder opened without following it; undefined if not a folder. */
async function openHeld(dir: number, name: string): Promise<FileHandle | undefined> {
  try {
    return await open(at(dir, name), FOLDER_FLAGS)
  } catch (error) {
    const why = code(error)
    if (why === 'ENOENT' || why === 'ENOTDIR' || why === 'ELOOP') return undefined
    throw error
  }
}

/** Unlinks an entry of a held folder (a symlink as a link); false when it was not there. */
async function unlinkIn(dir: number, name: string): Promise<boolean> {
  try {
    await unlink(at(dir, name))
    return true
  } catch (error) {
    if (code(error) === 'ENOENT') return false
    throw error
  }
}

/** Removes a non-folder entry; one that became a folder meanwhile is left to the next pass. */
async function removeEntry(dir: number, name: string): Promise<boolean> {
  try {
    await unlinkIn(dir, name)
    return false
  } catch (error) {
    if (code(error) !== 'EISDIR') throw error
    return true
  }
}

/**
 * One pass over the held folder `fd` (`depth` folders below `top`): every entry removed, folders
 * emptied first. Answers whether anything is left to do (folders moved up to `top`, entries that
 * appeared or changed meanwhile), which the caller's next pass handles.
 */
async function emptyOnce(top: number, fd: number, depth: number): Promise<boolean> {
  let again = false
  // Read a few entries at a time, never listed whole: a tenant's folder can hold millions of
  // names, in each of the folders held on the way down.
  for await (const entry of await opendir(at(fd, '.'))) {
    if (!entry.isDirectory()) {
      if (await removeEntry(fd, entry.name)) again = true
      continue
    }
    if (depth + 1 >= MAX_HELD) {
      await rename(at(fd, entry.name), at(top, `.deep-${randomBytes(8).toString('hex')}`))
      again = true
      continue
    }
    const child = await openHeld(fd, entry.name)
    if (child === undefined) {
      if (await removeEntry(fd, entry.name)) again = true
      continue
    }
    try {
      if (await emptyOnce(top, child.fd, depth + 1)) again = true
    } finally {
      await child.close()
    }
    try {
      await rmdir(at(fd, entry.name))
    } catch (error) {
      const why = code(error)
      if (why === 'ENOTEMPTY' || why === 'EEXIST') again = true
      else if (why !== 'ENOENT') throw error
    }
  }
  return again
}
