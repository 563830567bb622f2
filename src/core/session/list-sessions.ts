import type { ListedSession, ListSessionsQuery, TurnsQuery } from '../../contract/api.ts'
import type { SessionManifest } from '../../contract/session-manifest.ts'
import { listByActivity } from '../../store/activity-listing.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionStore } from '../../store/session-store.ts'
import { readTurnInputs, type TurnPage } from '../../store/turn-inputs.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { coordinatorId } from '../engine/with-lease.ts'
import { turnStateOf } from './turn-state.ts'

/**
 * `GET /v1/sessions`: one page of a tenant's sessions of a workspace by last activity, in the
 * query's order (the coordinator's activity index: src/store/activity-listing.ts).
 */
export async function listSessions(
  deps: ServiceDeps,
  tenant: string,
  query: ListSessionsQuery,
): Promise<{ sessions: ListedSession[]; cursor?: string }> {
  const { sessions, coordinator, clock } = deps
  const page = await listByActivity(
    { objects: sessions.objects, prefix: sessions.prefix, index: coordinator, nowMs: clock.now() },
    { tenant, workspace: query.workspace },
    { limit: query.limit, order: query.order, cursor: query.cursor },
  )
  const shown = page.sessions.filter(
    ({ manifest: m }) => m.tenant === tenant && (!query.status || m.status === query.status),
  )
  const listed = await Promise.all(
    shown.map(async ({ manifest, lastActivityMs }) => ({
      ...summary(manifest),
      last_activity_at: new Date(lastActivityMs).toISOString(),
      ...(await between(deps, manifest)),
    })),
  )
  return { sessions: listed, ...(page.cursor ? { cursor: page.cursor } : {}) }
}

/**
 * What an active session waits for between calls (its manifest's `between_calls`) and, only then,
 * whether anyone runs its turn (its lease), as `GET /v1/sessions/{id}` says in `activity`.
 */
async function between(
  deps: ServiceDeps,
  m: SessionManifest,
): Promise<Pick<ListedSession, 'activity_state' | 'turn_state'>> {
  const waits = m.status === 'active' ? m.between_calls : undefined
  const state = waits?.plan ? 'awaiting_plan_approval' : waits?.turn
  if (state === undefined) return {}
  const ref = { tenant: m.tenant, workspace: m.workspace, sessionId: m.session_id }
  const lease = await deps.coordinator.readLease(coordinatorId(ref))
  const turnState = turnStateOf(state, lease, deps.defaults.leaseMs, deps.clock.now())
  return { activity_state: state, ...(turnState ? { turn_state: turnState } : {}) }
}

/** `GET /v1/workspaces`: the tenant's workspaces with their numbers of sessions. */
export async function listWorkspaces(sessions: SessionStore, tenant: string) {
  return { workspaces: await sessions.workspaces(tenant) }
}

/** `GET /v1/sessions/{id}/turns`: a page of the session's turns with their recorded inputs. */
export async function listTurns(
  sessions: SessionStore,
  ref: SessionRef,
  query: TurnsQuery,
): Promise<TurnPage> {
  const { lastBatch } = await sessions.open(ref)
  return readTurnInputs(sessions.objects, sessions.keys(ref), lastBatch, query)
}

function summary(m: SessionManifest) {
  return {
    session_id: m.session_id,
    thread_id: m.thread_id,
    workspace: m.workspace,
    status: m.status,
    created_at: m.created_at,
    updated_at: m.updated_at,
    turn_count: m.turn_count,
    event_count: m.event_count,
    last_seq: m.last_seq,
    ...(m.title === undefined ? {} : { title: m.title }),
  }
}
