/**
 * Temp files of the fs store: every write first goes to a fresh file in the store's temp folder
 * (same filesystem as the objects), which then gets its name by link or rename.
 */
import { randomUUID } from 'node:crypto'
import { open, readdir, rm, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { errnoOf } from './fs-key-path.ts'

/** Temp files older than this are leftovers of a crash and are swept on first use. */
const TEMP_SWEEP_AGE_MS = 60 * 60 * 1000

/**
 * Writes `bytes` to a new temp file in `tmpDir` and returns its path; with `durable`, the bytes
 * are fsynced before this returns. A failed write leaves no file behind.
 */
export async function writeTempFile(
  tmpDir: string,
  bytes: Uint8Array,
  durable: boolean,
): Promise<string> {
  const temp = join(tmpDir, randomUUID())
  try {
    const handle = await open(temp, 'wx')
    try {
      await handle.writeFile(bytes)
      if (durable) await handle.sync()
    } finally {
      await handle.close()
    }
  } catch (error) {
    await removeTemp(temp)
    throw error
  }
  return temp
}

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
