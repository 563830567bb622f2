import type { ListSessionsQuery, SessionSummary, TurnsQuery } from '../../contract/api.ts'
import type { SessionManifest } from '../../contract/session-manifest.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionStore } from '../../store/session-store.ts'
import { readTurnInputs, type TurnPage } from '../../store/turn-inputs.ts'

/** `GET /v1/sessions`: one page of a tenant's sessions of a workspace, in the query's order. */
export async function listSessions(
  sessions: SessionStore,
  tenant: string,
  query: ListSessionsQuery,
): Promise<{ sessions: SessionSummary[]; cursor?: string }> {
  const page = await sessions.list(tenant, query.workspace, {
    limit: query.limit,
    order: query.order,
    ...(query.cursor ? { cursor: query.cursor } : {}),
  })
  const listed = page.sessions
    .filter((m) => m.tenant === tenant && (!query.status || m.status === query.status))
    .map(summary)
  return { sessions: listed, ...(page.cursor ? { cursor: page.cursor } : {}) }
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

function summary(m: SessionManifest): SessionSummary {
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
