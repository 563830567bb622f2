/**
 * Temp files of the fs store: every write first goes to a fresh file in the store's temp folder
 * (same filesystem as the objects; written by fs-writer-threads.ts), which then gets its name by
 * link or rename. Removing them, and sweeping those a crash left behind.
 */
import { readdir, rm, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { errnoOf } from './fs-key-path.ts'

/** Temp files older than this are leftovers of a crash and are swept on first use. */
const TEMP_SWEEP_AGE_MS = 60 * 60 * 1000

/** Removes a temp file (one unlink; `rm` would stat it first); a missing one is fine. */
export async function removeTemp(path: string): Promise<void> {
  await unlink(path).catch((error: unknown) => {
    if (errnoOf(error) !== 'ENOENT') throw error
  })
}

/** Removes temp files left over by a crash (older than an hour) from `tmpDir`. */
export async function sweepTemps(tmpDir: string): Promise<void> {
  const now = Date.now()
  for (const name of await readdir(tmpDir)) {
    const path = join(tmpDir, name)
    const info = await stat(path).catch(() => undefined)
    if (info && now - info.mtimeMs > TEMP_SWEEP_AGE_MS) await rm(path, { force: true })
  }
}
