import type { ObjectStore } from '../../ports/object-store.ts'
import { listAll } from '../../store/list-all.ts'

/**
 * VT Code keeps the newest 10 compaction archives of a session (`HistoryFileManager`,
 * `max_files_per_session`): after writing one it removes the oldest `<session>_….jsonl` files
 * of the session past that, and leaves the memory envelopes. Turnline does the same, so what a
 * reader of `history/` finds is what VT Code leaves there. Nothing is lost: every archived
 * message is in the session's batches, which are the record; an archive is a view of them.
 */
export const HISTORY_ARCHIVES_KEPT = 10

/** `<session>_<turn>_<stamp>[-<attempt>].jsonl`: the order in which they were written. */
const ARCHIVE_NAME = /_(\d+)_(\d{8}T\d{6}Z)(?:-(\d+))?\.jsonl$/

interface Archive {
  key: string
  turn: number
  stamp: string
  attempt: number
}

function archiveOf(key: string, prefix: string): Archive | undefined {
  const name = key.slice(prefix.length)
  if (name.includes('/')) return undefined
  const match = ARCHIVE_NAME.exec(name)
  if (!match) return undefined
  return { key, turn: Number(match[1]), stamp: match[2] ?? '', attempt: Number(match[3] ?? 1) }
}

function older(a: Archive, b: Archive): number {
  return a.turn - b.turn || a.stamp.localeCompare(b.stamp) || a.attempt - b.attempt
}

/**
 * Deletes the archives of session `sessionId` (under `<root>history/`) older than the newest
 * `keep`, oldest first; returns the keys deleted. One LIST, and a DELETE per archive past the
 * limit (one a compaction, once a session has that many).
 */
export async function pruneHistoryArchives(
  objects: ObjectStore,
  root: string,
  sessionId: string,
  keep: number = HISTORY_ARCHIVES_KEPT,
): Promise<string[]> {
  const prefix = `${root}history/${sessionId}_`
  const archives = (await listAll(objects, prefix)).objects
    .map((object) => archiveOf(object.key, `${root}history/`))
    .filter((archive): archive is Archive => archive !== undefined)
    .sort(older)
  const excess = archives.slice(0, Math.max(0, archives.length - keep))
  for (const archive of excess) await objects.delete(archive.key)
  return excess.map((archive) => archive.key)
}

/** pruneHistoryArchives, best effort: a failure is a warning of the turn, never its failure. */
export async function pruneHistoryArchivesQuietly(
  objects: ObjectStore,
  root: string,
  sessionId: string,
  warnings: string[],
): Promise<void> {
  try {
    await pruneHistoryArchives(objects, root, sessionId)
  } catch (error) {
    warnings.push(`older compaction archives were not removed: ${String(error)}`)
  }
}
