/**
 * An operation on one key of the fs store, inside the held folder of its name
 * (fs-folder-handles.ts: reached without following a link): reading the object, and the step a
 * delete takes, and the pruning of the folders it empties. What a link on the way means depends
 * on the operation: a read treats it as absent (nothing behind a link exists for the store), a
 * delete refuses it (corrupt_data).
 */
import { open, rmdir } from 'node:fs/promises'
import { basename, dirname, sep } from 'node:path'
import { forgetFolder, type HeldFolder, holdFolder } from './fs-folder-handles.ts'
import { errnoOf, storageError } from './fs-key-path.ts'
import { FILE_READ_FLAGS, SymlinkInStore } from './fs-no-follow.ts'
import { symlinkError } from './fs-place.ts'

/** Errors that mean "no such object here": nothing there, or no folder on the way. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR'])

/**
 * Runs `use` in the held folder `dir` of `key`. Resolves undefined when the folder does not exist
 * (or, with `onLink: 'absent'`, when a link is on the way). When `use` finds nothing (undefined)
 * and the kept handle turns out stale (its folder was removed and made again), runs it once more
 * on the folder as it is now.
 */
export async function inKeyFolder<T>(
  root: string,
  dir: string,
  key: string,
  onLink: 'absent' | 'refuse',
  use: (folder: HeldFolder) => Promise<T | undefined>,
): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    let folder: HeldFolder
    try {
      ;({ folder } = await holdFolder(root, dir, { exact: onLink === 'refuse' }))
    } catch (error) {
      if (error instanceof SymlinkInStore) {
        if (onLink === 'absent') return undefined
        throw symlinkError(key, error)
      }
      if (ABSENT.has(errnoOf(error) ?? '')) return undefined
      throw storageError(error, 'open', key)
    }
    let retry = false
    try {
      const result = await use(folder)
      if (result !== undefined || attempt > 0) return result
      retry = await folder.stale()
      if (!retry) return undefined
    } finally {
      if (retry) folder.discard()
      else folder.release()
    }
  }
}

/**
 * The bytes of the object file `path` (a name in a held folder) and its version (inode and birth
 * time, of the file read: a put may replace the name meanwhile); undefined when there is none:
 * missing, a folder, a link (O_NOFOLLOW: never followed) or anything but a regular file. Opened
 * non-blocking and without becoming a controlling terminal, so a FIFO someone made in the store
 * is not waited on.
 */
export async function readObjectFile(
  path: string,
  key: string,
): Promise<{ body: Uint8Array; version: string } | undefined> {
  let data: Buffer
  let version: string
  try {
    const handle = await open(path, FILE_READ_FLAGS)
    try {
      const info = await handle.stat({ bigint: true })
      if (!info.isFile()) return undefined
      version = `${info.ino}.${info.birthtimeNs}`
      data = await handle.readFile()
    } finally {
      await handle.close()
    }
  } catch (error) {
    const errno = errnoOf(error) ?? ''
    if (ABSENT.has(errno) || errno === 'ELOOP' || errno === 'EISDIR' || errno === 'ENXIO') {
      return undefined
    }
    throw storageError(error, 'read', key)
  }
  return { body: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), version }
}

/** Removes empty folders from `dir` up to (not including) the root, each through its parent. */
export async function pruneFolders(root: string, dir: string): Promise<void> {
  while (dir.startsWith(root + sep)) {
    const parent = dirname(dir)
    let removed = false
    try {
      const { folder } = await holdFolder(root, parent)
      try {
        await rmdir(folder.child(basename(dir)))
        removed = true
      } finally {
        folder.release()
      }
    } catch {
      // Not empty, gone already, or a link on the way: pruning stops here.
    }
    if (!removed) return
    forgetFolder(dir)
    dir = parent
  }
}
