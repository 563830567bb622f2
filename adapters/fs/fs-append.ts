/**
 * Appends of the fs store (`ObjectStore.append`): the bytes are written into the object's own
 * file, at `at`, by a writer thread (fs-writer-thread-source.ts) — no temp file, no lock, no new
 * name — or, when the append is not synced, small, and its file exists, on the calling thread
 * with the same calls and checks (fs-append-here.ts: a page-cache write, cheaper than a thread's
 * round trip). The file is named through its folder's held descriptor (fs-folder-handles.ts: reached
 * without following a link, made if missing) and opened `O_NOFOLLOW`, like every write of the
 * store: a link at the name or on the way is refused (corrupt_data), never followed. The thread
 * checks the file's size and version (inode and birth time: a put replaces the file, so the
 * version changes; appends keep it) just before writing, and fsyncs the file before the append
 * returns (unless the caller asked for `durable: false`: then the bytes are left to the page
 * cache until a later durable append to the file, which may be one of no bytes, syncs them); the
 * check and the write are not atomic against another process, which the port's
 * contract leaves to callers (they write the same bytes at the same offset). A file the append
 * creates (`ifSize` 0, no file yet) gets its name made durable like a put's: its folder, and any
 * folder created for it, are fsynced.
 */
import { basename, dirname } from 'node:path'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { AppendOptions, AppendResult } from '../../src/ports/object-store.ts'
import { appendHere, appendsHere } from './fs-append-here.ts'
import { syncNewName } from './fs-durability.ts'
import { errnoOf, storageError } from './fs-key-path.ts'
import { SymlinkInStore } from './fs-no-follow.ts'
import { holdKeyFolder, symlinkError } from './fs-place.ts'
import { type AppendReply, appendOnThread } from './fs-writer-threads.ts'

/** How often an append retries when a concurrent delete pruned its folder. */
const FOLDER_RETRIES = 8

export async function appendToFile(
  root: string,
  path: string,
  key: string,
  bytes: Uint8Array,
  options: AppendOptions,
  durable: boolean,
): Promise<AppendResult> {
  const name = basename(path)
  let created: string | undefined
  for (let attempt = 0; attempt < FOLDER_RETRIES; attempt++) {
    const held = await holdKeyFolder(root, dirname(path), key, true)
    created = held.created ?? created
    const { folder } = held
    let reply: AppendReply
    let stale = false
    try {
      try {
        const request = {
          path: folder.child(name),
          at: options.at,
          ifSize: options.ifSize,
          ifVersion: options.ifVersion,
        }
        const synced = durable && options.durable !== false
        // A copy per attempt, moved to the thread: the caller's bytes stay as they are.
        reply =
          (appendsHere(bytes, synced) ? appendHere({ ...request, bytes }) : undefined) ??
          (await appendOnThread({ ...request, bytes: new Uint8Array(bytes), durable: synced }))
      } catch (error) {
        const errno = errnoOf(error)
        if (errno === 'ENOENT' && (await folder.stale())) {
          stale = true
          continue // the folder was removed since it was held: hold it anew
        }
        if (errno === 'ELOOP') throw symlinkError(key, undefined)
        if (errno === 'EFTYPE' || errno === 'EISDIR') {
          throw new TurnlineError('corrupt_data', 'The store holds something else at this name', {
            logDetails: { key },
            cause: error,
          })
        }
        throw storageError(error, 'write', key)
      }
      if (reply.conflict) {
        throw new TurnlineError('conflict', 'Object changed since it was read', {
          logDetails: { key, size: reply.size, expected: options.ifSize },
        })
      }
      if (reply.created && durable) {
        await syncNewName(root, folder, created).catch((error: unknown) => {
          if (error instanceof SymlinkInStore) throw symlinkError(key, error)
          throw storageError(error, 'sync', key)
        })
      }
      return { size: reply.size, version: reply.version }
    } finally {
      if (stale) folder.discard()
      else folder.release()
    }
  }
  throw new TurnlineError('storage_unavailable', 'Parent folder kept vanishing', {
    logDetails: { key },
  })
}
