import type { TurnRequest } from '../../contract/api.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { completedError } from '../engine/turn-replay.ts'
import type { QueuedWork } from './background-api.ts'
import { withPendingPlace } from './pending-room.ts'
import { queueWork, serverKey } from './queue-work.ts'
import { committedTurn, ranTurn, retractRecord } from './ran-turn.ts'

/**
 * A background turn (`Prefer: respond-async`) recorded for a worker under the pending-work cap.
 * A keyed retry whose turn ran or is open is its duplicate, recorded again nowhere, capped or
 * not: the session's state holds its key (the recent turns, the open turn), or, for a turn older
 * than those, the coordinator still keeps its outcome (read beside the state, one GET). A turn
 * that ends between that check and the write (its record gone, so the write makes a new one) is
 * found by the same check made again after a write that made something, and the new record is
 * taken back unless a worker took it first (`earlier` answers it so at the cap).
 */
export async function queueTurn(
  deps: ServiceDeps,
  locator: SessionLocator,
  work: WorkQueue,
  at: { tenant: string; sessionId: string },
  request: TurnRequest,
  key: string | undefined,
): Promise<QueuedWork> {
  const { tenant, sessionId } = at
  const ref = await locator.locate(tenant, sessionId)
  const ran = async (turn: string) => {
    const keyed = { sessionId, key: turn, request }
    const [stored, committed] = await Promise.all([
      deps.sessions.open(ref),
      committedTurn(deps.coordinator, ref, keyed),
    ])
    const state = parseEngineState(stored.state)
    return { stored, answer: (await ranTurn(state, keyed)) ?? committed }
  }
  if (key !== undefined) {
    const { stored, answer } = await ran(key)
    if (answer) return answer
    if (stored.status === 'completed') throw completedError(ref)
  } else if ((await deps.sessions.manifest(ref)).status === 'completed') {
    throw completedError(ref)
  }
  const idempotencyKey = key ?? serverKey(deps)
  const write = async () => {
    const queued = await queueWork(deps, work, {
      tenant,
      sessionId,
      idempotencyKey,
      request,
      source: 'turns',
    })
    if (key === undefined || queued.duplicate) return queued
    const late = (await ran(key)).answer
    if (late === undefined) return queued
    const record = { tenant, session_id: sessionId, work_id: queued.work_id }
    return (await retractRecord(work, record)) ? late : queued
  }
  const record = { sessionId, idempotencyKey }
  const earlier = key === undefined ? undefined : async () => (await ran(key)).answer
  return withPendingPlace(deps, work, tenant, write, record, earlier)
}
