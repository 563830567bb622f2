import type { TurnRequest } from '../../contract/api.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import type { WorkLocation } from '../../contract/work-record.ts'
import type { Coordinator } from '../../ports/coordinator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import {
  assertSameRequest,
  coordinatorRecord,
  idempotentCall,
  recordedTurn,
  sessionScopedKey,
} from '../engine/idempotency.ts'
import type { QueuedWork } from './background-api.ts'
import { workIdOf } from './queue-work.ts'

/** A keyed background turn as sent: its session, its key and its request. */
export interface KeyedTurn {
  sessionId: string
  key: string
  request: TurnRequest
}

/**
 * The answer of a keyed background turn that its session's state holds already — it ran (one of
 * the recent turns), or it is the open turn (running, or waiting) — as its first request had it,
 * `duplicate`, recording nothing: its record left the queue, and one written again would only
 * replay the outcome. Undefined when the state holds no turn of the key (a new request, or one
 * whose record is still pending, which the write finds). The key with another request is 422.
 */
export async function ranTurn(
  state: EngineState,
  turn: KeyedTurn,
): Promise<QueuedWork | undefined> {
  const call = await idempotentCall(turn.key, 'turn', turn.request)
  const open = state.open_turn
  if (call && open?.idempotency_key === turn.key) assertSameRequest(open.request_fingerprint, call)
  else if (!recordedTurn(state, call)) return undefined
  return duplicateOf(turn)
}

/**
 * The same answer for a key whose turn is older than the state's recent turns: the outcome the
 * coordinator keeps under it (`endTurn`'s idempotency record, one GET), which is what the
 * worker would replay. Undefined when it keeps none (a new key, or one past the record's life,
 * which the engine would run as new). The key with another request is 422.
 */
export async function committedTurn(
  coordinator: Coordinator,
  ref: SessionRef,
  turn: KeyedTurn,
): Promise<QueuedWork | undefined> {
  const call = await idempotentCall(turn.key, 'turn', turn.request)
  if (!call) return undefined
  const record = await coordinator.readIdempotency(ref.tenant, sessionScopedKey(ref, call))
  if (record === undefined) return undefined
  coordinatorRecord(record.response, call)
  return duplicateOf(turn)
}

/**
 * Takes back a record a keyed write just made when its turn turned out to have run meanwhile
 * (the first record ran and left the queue between the admission's check and its write): true
 * when it is taken back, no worker having touched it. False when a worker has (it is marked,
 * or already gone: that run may be the turn's first), and the write's answer stands.
 */
export async function retractRecord(queue: WorkQueue, at: WorkLocation): Promise<boolean> {
  const mine = await queue.read(at)
  if (mine === null) return false
  const { started_at, attempts, waiting } = mine.record
  if (started_at !== undefined || attempts > 0 || waiting !== undefined) return false
  await queue.remove(at)
  return true
}

async function duplicateOf(turn: KeyedTurn): Promise<QueuedWork> {
  const workId = await workIdOf(turn.key)
  return { work_id: workId, session_id: turn.sessionId, idempotency_key: turn.key, duplicate: true }
}
