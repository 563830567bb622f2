import type { ActivityScan } from '../ports/activity-index.ts'

/** A session of a walk's page: where the walk places it, and its last activity now. */
export interface WalkEntry {
  sessionId: string
  /** Its position at the walk's `asOf` (what the cursor continues from). */
  position: number
  /** Its last activity now (epoch ms of the index's clock); later than `asOf` if it moved since. */
  lastActivityMs: number
}

/**
 * One page of a walk through the activity index, in the order as it stood at the walk's first
 * page (`scan.asOf`): every session indexed then (and not dropped since) is listed exactly once,
 * at the position it had then — a session touched during the walk keeps its place (it shows its
 * new last activity), so it is neither skipped nor listed twice; sessions created during the walk
 * are not part of it (the next walk lists them). Order: position, then session id, both descending
 * for `desc`. `after` is the last session of the previous page; `scan.beyond` must hold up to
 * `limit + 1` entries, so `more` is exact.
 */
export function walkPage(
  scan: ActivityScan,
  direction: 'desc' | 'asc',
  after: { position: number; sessionId: string } | undefined,
  limit: number,
): { entries: WalkEntry[]; more: boolean } {
  const sign = direction === 'desc' ? -1 : 1
  const compare = (a: WalkEntry, b: { position: number; sessionId: string }) =>
    sign *
    (a.position - b.position ||
      (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0))
  const isNext = (entry: WalkEntry) => after === undefined || compare(entry, after) > 0
  const still = (entries: ActivityScan['beyond']) =>
    entries
      .filter(({ position }) => position <= scan.asOf)
      .map(({ sessionId, position }) => ({ sessionId, position, lastActivityMs: position }))
  const moved = scan.moved
    .filter(({ from }) => from <= scan.asOf)
    .map(({ sessionId, from, position }) => ({
      sessionId,
      position: from,
      lastActivityMs: position,
    }))
  const seen = new Set<string>()
  const candidates = [...still(scan.beyond), ...still(scan.ties), ...moved]
    .filter(isNext)
    .sort(compare)
    .filter(({ sessionId }) => !seen.has(sessionId) && seen.add(sessionId) !== undefined)
  return { entries: candidates.slice(0, limit), more: candidates.length > limit }
}
