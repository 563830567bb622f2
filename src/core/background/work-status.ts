import { parseEngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import { loopWorkFolder, type WorkRecord } from '../../contract/work-record.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { WorkStatus } from './background-api.ts'
import { workIdOf } from './queue-work.ts'

/**
 * Where a background turn stands, from its record and its session: failed (the record says
 * why), done (the session's recent turns hold its key's outcome), running (a worker started its
 * turn, or the session's open turn is its key's), queued (recorded, not started). The recent turns are the last 16: a work
 * id older than those, with no record left, is not found.
 */
export async function workStatus(
  deps: ServiceDeps,
  locator: SessionLocator,
  queue: WorkQueue,
  at: { tenant: string; sessionId: string; workId: string },
): Promise<WorkStatus> {
  const ref = await locator.locate(at.tenant, at.sessionId)
  const base = { work_id: at.workId, session_id: at.sessionId }
  const location = { tenant: at.tenant, session_id: at.sessionId, work_id: at.workId }
  const stored = await queue.read(location)
  const record = stored?.record ?? (await queue.readFailed(location)) ?? undefined
  if (record?.failed) {
    return { ...base, state: 'failed', attempts: record.attempts, error: record.failed }
  }
  const state = parseEngineState((await deps.sessions.open(ref)).state)
  for (const turn of state.recent_turns) {
    if ((await workIdOf(turn.key)) === at.workId) {
      return { ...base, state: 'done', turn: { turn_id: turn.turn_id, status: turn.status } }
    }
  }
  const open = state.open_turn
  const opened =
    open?.idempotency_key !== undefined && (await workIdOf(open.idempotency_key)) === at.workId
  if (opened || record?.started_at) {
    const turn = opened && open ? { turn: { turn_id: open.turn_id } } : {}
    return { ...base, state: 'running', ...turn, ...tries(record) }
  }
  if (record) return { ...base, ...pending(record) }
  throw new TurnlineError(
    'not_found',
    `no background work ${at.workId.slice(0, 64)} on this session`,
  )
}

function tries(record: { attempts: number; last_error?: WorkStatus['last_error'] } | undefined) {
  if (!record || record.attempts === 0) return {}
  return {
    attempts: record.attempts,
    ...(record.last_error ? { last_error: record.last_error } : {}),
  }
}

/** A loop step's work, from its record alone: once it ran, the loop's own state shows the step. */
export async function loopWorkStatus(
  queue: WorkQueue,
  at: { tenant: string; loopId: string; workId: string },
): Promise<WorkStatus> {
  const folder = loopWorkFolder(at.loopId)
  const location = { tenant: at.tenant, session_id: folder, work_id: at.workId }
  const record = (await queue.read(location))?.record ?? (await queue.readFailed(location))
  if (!record) {
    throw new TurnlineError(
      'not_found',
      `no pending step ${at.workId} on loop ${at.loopId}: once a step ran, GET /v1/loops/${at.loopId} shows it`,
    )
  }
  const base = { work_id: at.workId, session_id: `${at.loopId}-step-${record.step_index ?? 0}` }
  if (record.failed)
    return { ...base, state: 'failed', attempts: record.attempts, error: record.failed }
  if (record.started_at) return { ...base, state: 'running', ...tries(record) }
  return { ...base, ...pending(record) }
}

/** A record not started: queued, or waiting for its tenant's daily quota (and until when). */
function pending(record: WorkRecord): Pick<WorkStatus, 'state' | 'waiting' | 'attempts'> {
  const wait = record.waiting
  if (!wait) return { state: 'queued', ...tries(record) }
  const waiting = {
    reason: wait.code,
    message: wait.message,
    since: wait.since,
    retry_at: wait.retry_at,
    refusals: wait.refusals,
  }
  return { state: 'waiting', waiting, ...tries(record) }
}
