/**
 * The activity index: a tenant's sessions of one workspace ordered by their last activity, kept by
 * the Coordinator (a sorted set per workspace in Redis, a map in the in-process coordinator). It
 * is derived data: the session store stays the record, and a listing fills in sessions the index
 * lacks (`missingActivity` + `backfillActivity`, src/store/activity-listing.ts).
 *
 * Positions are milliseconds from the index's own clock, which never goes back: a touch is placed
 * at `max(its time, the workspace's clock + 1)`, so every touch is later than every position
 * handed out before it, whatever the clocks of the instances that touch. A touch that moves a
 * session already indexed also records the move (when, and from where) for
 * `ACTIVITY_MOVES_WINDOW_MS`: a listing walk reads the order as it stood at its first page
 * (`asOf`), placing a session touched since at the position it had then (src/store/activity-walk.ts).
 */

/** A tenant's workspace: the scope of one index. */
export interface ActivityScope {
  tenant: string
  workspace: string
}

/** A session of the scope that was active at `atMs` (epoch ms of the caller's clock). */
export interface ActivityTouch extends ActivityScope {
  sessionId: string
  atMs: number
}

/** An indexed session and where it stands. */
export interface ActivityEntry {
  sessionId: string
  /** Its position: the index's time of its last activity (epoch ms). */
  position: number
}

/** A session touched after the scan's `asOf`, with the position it had at `asOf`. */
export interface ActivityMove extends ActivityEntry {
  /** Its position at `asOf`: where the walk lists it. */
  from: number
}

export interface ActivityScanQuery extends ActivityScope {
  /** `desc`: latest activity first. */
  direction: 'desc' | 'asc'
  /** The walk's snapshot point; absent: the index's clock now (a walk's first page). */
  asOf?: number
  /** The position of the walk's last listed entry; absent on a first page. */
  boundary?: number
  /** At most this many entries of `below` (a caller asks one more than a page to tell if more follow). */
  limit: number
}

/**
 * What a walk's page is made of (merged by src/store/activity-walk.ts): the entries at or before
 * `asOf` beyond the boundary in the direction (`beyond`, at most `limit`), the entries exactly at
 * the boundary (`ties`, which the walk tells apart by session id), and the sessions still indexed
 * that moved after `asOf` (`moved`, each once, with its position at `asOf`).
 */
export interface ActivityScan {
  asOf: number
  beyond: ActivityEntry[]
  ties: ActivityEntry[]
  moved: ActivityMove[]
  /** When the scope was last filled in from the session store (epoch ms); absent: never. */
  filledAtMs?: number
}

/** How long a move stays recorded: a walk longer than this may miss a session moved meanwhile. */
export const ACTIVITY_MOVES_WINDOW_MS = 60 * 60 * 1000

/** The index's side of the Coordinator (src/ports/coordinator.ts). */
export interface ActivityIndex {
  /** Places the session at the index's now (a created or forked session). */
  touchActivity(touch: ActivityTouch): Promise<void>
  /** The raw material of one page of a walk (one round trip). */
  scanActivity(query: ActivityScanQuery): Promise<ActivityScan>
  /** Of `sessionIds`, the ones the scope's index lacks, in the given order. */
  missingActivity(scope: ActivityScope, sessionIds: readonly string[]): Promise<string[]>
  /**
   * Adds the sessions the index lacks at the given positions (an entry already there keeps its
   * own) and records the scope as filled at `filledAtMs`.
   */
  backfillActivity(
    scope: ActivityScope,
    entries: readonly ActivityEntry[],
    filledAtMs: number,
  ): Promise<void>
  /** Removes sessions from the scope's index (deleted, or found gone by a listing). */
  dropActivity(scope: ActivityScope, sessionIds: readonly string[]): Promise<void>
}
