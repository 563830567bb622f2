/**
 * Temp files of the fs store: every write first goes to a fresh file in the store's tmp folder
 * (same filesystem as the objects; written by fs-writer-threads.ts, named through the folder's
 * descriptor: fs-work-folders.ts), which then gets its name by link or rename. Removing one.
 */
import { unlink } from 'node:fs/promises'
import { errnoOf } from './fs-key-path.ts'

/** Removes a temp file (one unlink; `rm` would stat it first); a missing one is fine. */
export async function removeTemp(path: string): Promise<void> {
  await unlink(path).catch((error: unknown) => {
    if (errnoOf(error) !== 'ENOENT') throw error
  })
}
