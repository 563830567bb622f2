import type { ObjectStore } from '../../ports/object-store.ts'
import { listAll } from '../../store/list-all.ts'

/**
 * VT Code keeps the newest 10 compaction archives of a session (`HistoryFileManager`,
 * `max_files_per_session`): after writing one it removes the oldest `<session>_….jsonl` files
 * of the session past that, and leaves the memory envelopes. Turnline does the same, so what a
 * reader of `history/` finds is what VT Code leaves there. Nothing is lost: every archived
 * message is in the session's batches, which are the record; an archive is a view of them.
 *
 * Which archives count is the session state's list (`compaction_archives`), not a listing of
 * `history/`: the list holds only the archives of committed compactions, so an archive a
 * compaction wrote before it crashed or lost its commit to another instance never pushes out a
 * committed one, and a compaction running beside this one on another instance, which no
 * committed state names yet, is never removed by it. Both run from the same committed list and
 * remove the same oldest archives. Keeping the list costs no request, where the listing grew
 * with every envelope the session ever kept.
 */
export const HISTORY_ARCHIVES_KEPT = 10

/** `<session>_<turn>_<stamp>[-<attempt>].jsonl`: the order in which they were written. */
const ARCHIVE_NAME = /_(\d+)_(\d{8}T\d{6}Z)(?:-(\d+))?\.jsonl$/
/** An archive's name after `<session>_`, as the state lists it. */
const LISTED_NAME = /^\d+_\d{8}T\d{6}Z(?:-\d+)?\.jsonl$/

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

/** Where the archives of session `sessionId` are: a listed name follows it. */
export function archivePrefix(root: string, sessionId: string): string {
  return `${root}history/${sessionId}_`
}

/**
 * The archives of session `sessionId` found under `<root>history/`, oldest first, by their listed
 * names: for a state written before the list was kept (one LIST of everything the session's
 * `history/` holds, envelopes included), once; what it finds is taken as kept, as the listing
 * always did.
 */
export async function listedArchives(
  objects: ObjectStore,
  root: string,
  sessionId: string,
): Promise<string[]> {
  const prefix = archivePrefix(root, sessionId)
  return (await listAll(objects, prefix)).objects
    .map((object) => archiveOf(object.key, `${root}history/`))
    .filter((archive): archive is Archive => archive !== undefined)
    .sort(older)
    .map((archive) => archive.key.slice(prefix.length))
}

export interface ArchiveRetentionInput {
  root: string
  sessionId: string
  /**
   * The committed state's list (names after `history/<session>_`), oldest first; undefined or
   * null for a state written before it was kept (the session's archives are then listed once).
   */
  kept: readonly string[] | null | undefined
  /** The key of the archive this compaction wrote. */
  added: string
  keep?: number
}

export interface ArchiveRetention {
  /** The list the compaction's state keeps: the newest `keep`, after any whose removal failed. */
  kept: string[]
  /** Keys deleted. */
  deleted: string[]
  /** Removals that failed, with why. */
  failures: string[]
}

/**
 * Adds `added` to the kept list and deletes what falls past the newest `keep`, oldest first:
 * no LIST (but the once of an older state), a DELETE per archive past the limit (one a
 * compaction, once a session has that many). A name is only ever read as an archive of this
 * session's `history/`; one that is not an archive's name is dropped, never deleted.
 */
export async function retainArchives(
  objects: ObjectStore,
  input: ArchiveRetentionInput,
): Promise<ArchiveRetention> {
  const { root, sessionId, keep = HISTORY_ARCHIVES_KEPT } = input
  const prefix = archivePrefix(root, sessionId)
  const added = input.added.slice(prefix.length)
  if (!input.added.startsWith(prefix) || !LISTED_NAME.test(added)) {
    throw new Error(`not an archive of session ${sessionId}: ${input.added}`)
  }
  const known = input.kept ?? (await listedArchives(objects, root, sessionId))
  const all = [...known.filter((name) => name !== added && LISTED_NAME.test(name)), added]
  const excess = all.slice(0, Math.max(0, all.length - keep))
  const results = await Promise.allSettled(excess.map((name) => objects.delete(prefix + name)))
  const deleted: string[] = []
  const failed: string[] = []
  const failures: string[] = []
  results.forEach((result, index) => {
    const name = excess[index] as string
    if (result.status === 'fulfilled') deleted.push(prefix + name)
    else {
      failed.push(name)
      failures.push(`${prefix + name}: ${String(result.reason)}`)
    }
  })
  return { kept: [...failed, ...all.slice(excess.length)], deleted, failures }
}

/**
 * retainArchives, best effort: a failure is a warning of the turn, never its failure. Null when
 * even the list could not be made (an older state's LIST failed): the next compaction lists again.
 */
export async function retainArchivesQuietly(
  objects: ObjectStore,
  input: ArchiveRetentionInput,
  warnings: string[],
): Promise<string[] | null> {
  try {
    const retention = await retainArchives(objects, input)
    if (retention.failures.length > 0) {
      warnings.push(
        `older compaction archives were not removed (tried again next time): ${retention.failures.join('; ')}`,
      )
    }
    return retention.kept
  } catch (error) {
    warnings.push(`older compaction archives were not removed: ${String(error)}`)
    return null
  }
}
