import type { SessionManifest } from '../contract/session-manifest.ts'
import type { ActivityEntry, ActivityIndex, ActivityScope } from '../ports/activity-index.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { walkPage } from './activity-walk.ts'
import { listAll } from './list-all.ts'
import { decodeListCursor, encodeListCursor } from './session-list-cursor.ts'
import { currentManifest } from './session-listing.ts'
import { sessionPointerKey, workspaceSessionsPrefix } from './session-ref.ts'

/** How often a workspace's index is checked against the store for sessions it lacks. */
export const ACTIVITY_REFILL_MS = 60 * 60 * 1000

/** The order of a listing: by last activity, the latest (`newest`) or the earliest first. */
export type ListOrder = 'newest' | 'oldest'

export interface ActivityListing {
  /** Each session's manifest brought up to its log, and its last activity (epoch ms). */
  sessions: { manifest: SessionManifest; lastActivityMs: number }[]
  cursor?: string
}

interface Where {
  objects: ObjectStore
  prefix: string
  index: ActivityIndex
  nowMs: number
}

/**
 * One page of a workspace's sessions by last activity (the coordinator's activity index,
 * src/ports/activity-index.ts): one index round trip, then the page's manifests in parallel. A
 * walk's cursor keeps the order of its first page (activity-walk.ts). A first page whose
 * workspace was not checked against the store for `ACTIVITY_REFILL_MS` (never, after a restart of
 * the in-process index) first fills in the sessions the index lacks — sessions older than the
 * index, or whose creation could not reach it — at the time of their last commit. A session the
 * index holds but the store no longer does (deleted, removed by retention) is dropped from it.
 */
export async function listByActivity(
  where: Where,
  scope: ActivityScope,
  options: { cursor?: string | undefined; limit: number; order: ListOrder },
): Promise<ActivityListing> {
  const { objects, prefix, index } = where
  const { order, limit } = options
  const direction = order === 'newest' ? 'desc' : 'asc'
  const walk = options.cursor ? decodeListCursor(options.cursor, scope.workspace, order) : undefined
  const scan = () =>
    index.scanActivity({
      ...scope,
      direction,
      limit: limit + 1,
      ...(walk ? { asOf: walk.asOf, boundary: walk.after.position } : {}),
    })
  let scanned = await scan()
  const filled = scanned.filledAtMs
  // A cursor page fills in only an index never filled (a restarted process's, continuing a walk
  // of the process before: the positions are the same times of last commit).
  const due = filled === undefined || (!walk && where.nowMs - filled >= ACTIVITY_REFILL_MS)
  if (due) {
    await fillIn(where, scope)
    scanned = await scan()
  }
  const root = workspaceSessionsPrefix(prefix, scope.tenant, scope.workspace)
  const { asOf } = scanned
  // A session the index holds but the store no longer does is dropped and the page filled from
  // the sessions after it: a page is short only when nothing follows.
  for (let round = 0; ; round++) {
    const page = walkPage(scanned, direction, walk?.after, limit)
    const read = await Promise.all(
      page.entries.map((entry) => currentManifest(objects, prefix, `${root}${entry.sessionId}/`)),
    )
    const gone = page.entries.filter((_, i) => read[i] === undefined).map((e) => e.sessionId)
    if (gone.length > 0) await index.dropActivity(scope, gone)
    if (gone.length === 0 || round === 3) {
      const shown = page.entries.flatMap((entry, i) => {
        const manifest = read[i]
        return manifest ? [{ entry, manifest }] : []
      })
      const sessions = shown.map(({ entry, manifest }) => ({
        manifest,
        lastActivityMs: entry.lastActivityMs,
      }))
      // The cursor names the last session listed (never one found gone).
      const last = shown.at(-1)?.entry ?? page.entries.at(-1)
      if (!page.more || last === undefined) return { sessions }
      const after = { position: last.position, sessionId: last.sessionId }
      return {
        sessions,
        cursor: encodeListCursor({ workspace: scope.workspace, order, asOf, after }),
      }
    }
    scanned = await index.scanActivity({
      ...scope,
      direction,
      limit: limit + 1,
      asOf,
      ...(walk ? { boundary: walk.after.position } : {}),
    })
  }
}

/**
 * Adds to the index the workspace's sessions it lacks, each at its last commit: the session
 * folders that still have their id pointer (a deleted session's folder keeps a marker only), one
 * listing per 1,000 sessions, and the manifests of the missing ones only.
 */
async function fillIn(where: Where, scope: ActivityScope): Promise<void> {
  const { objects, prefix, index } = where
  const root = workspaceSessionsPrefix(prefix, scope.tenant, scope.workspace)
  const pointers = sessionPointerKey(prefix, scope.tenant, 'x').slice(0, -'x.json'.length)
  const [folders, pointed] = await Promise.all([
    listAll(objects, root, { delimiter: '/' }),
    listAll(objects, pointers),
  ])
  const live = new Set(pointed.objects.map(({ key }) => key.slice(pointers.length, -5)))
  const ids = folders.prefixes.map((f) => f.slice(root.length, -1)).filter((id) => live.has(id))
  const missing: string[] = []
  for (let i = 0; i < ids.length; i += 500) {
    missing.push(...(await index.missingActivity(scope, ids.slice(i, i + 500))))
  }
  const added: ActivityEntry[] = []
  for (let i = 0; i < missing.length; i += 32) {
    const chunk = missing.slice(i, i + 32)
    const read = await Promise.all(
      chunk.map((id) => currentManifest(objects, prefix, `${root}${id}/`)),
    )
    for (const manifest of read) {
      if (manifest?.tenant !== scope.tenant) continue
      added.push({ sessionId: manifest.session_id, position: Date.parse(manifest.updated_at) })
    }
  }
  for (let i = 0; i < added.length; i += 500) {
    await index.backfillActivity(scope, added.slice(i, i + 500), where.nowMs)
  }
  if (added.length === 0) await index.backfillActivity(scope, [], where.nowMs)
}
