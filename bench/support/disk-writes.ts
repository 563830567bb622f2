import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'

interface FileMark {
  ino: number
  /** Told apart from `ino`: a number freed by a delete can come back for the next new file. */
  birthtimeMs: number
  size: number
  mtimeMs: number
}

/** What a server wrote under its data folder between two looks, read from the disk alone. */
export interface DiskWrites {
  /** Files written whole (new, or replaced: a new inode, as the fs store's puts rename). */
  replaced: number
  /** Files grown in place (the fs store's appends). */
  appended: number
  /** Bytes written: a replaced file's size, an appended file's growth. */
  bytes: number
  /** Bytes the folder holds now, all files. */
  held: number
  /** Of `bytes`, those of the files `tracked` names. */
  trackedBytes: number
}

async function marks(root: string): Promise<Map<string, FileMark>> {
  const found = new Map<string, FileMark>()
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    await Promise.all(
      entries.map(async (entry) => {
        const path = join(dir, entry.name)
        if (entry.isDirectory()) return walk(path)
        if (!entry.isFile()) return
        const stat = await lstat(path).catch(() => undefined)
        if (stat)
          found.set(path, {
            ino: stat.ino,
            birthtimeMs: stat.birthtimeMs,
            size: stat.size,
            mtimeMs: stat.mtimeMs,
          })
      }),
    )
  }
  await walk(root)
  return found
}

/**
 * Watches a folder from outside the process that writes it: each `take()` walks it and tells
 * what changed since the last one. The fs store puts an object by renaming a temporary file
 * over its name (a new file: another inode or birth time) and appends in place (the same inode, grown), so a replaced file
 * counts its whole size and an appended one its growth; a file rewritten in place (same inode,
 * changed time) counts whole. Deleted files count nothing. Not an object request count: reads
 * and lists leave no mark on the disk.
 */
export async function diskWatch(root: string, tracked: (path: string) => boolean = () => false) {
  let last = await marks(root)
  return {
    async take(): Promise<DiskWrites> {
      const now = await marks(root)
      const writes: DiskWrites = { replaced: 0, appended: 0, bytes: 0, held: 0, trackedBytes: 0 }
      for (const [path, mark] of now) {
        writes.held += mark.size
        const written = writes.bytes
        const before = last.get(path)
        if (!before || before.ino !== mark.ino || before.birthtimeMs !== mark.birthtimeMs) {
          writes.replaced += 1
          writes.bytes += mark.size
        } else if (mark.size > before.size) {
          writes.appended += 1
          writes.bytes += mark.size - before.size
        } else if (mark.mtimeMs !== before.mtimeMs || mark.size !== before.size) {
          writes.replaced += 1
          writes.bytes += mark.size
        }
        if (tracked(path)) writes.trackedBytes += writes.bytes - written
      }
      last = now
      return writes
    },
  }
}
