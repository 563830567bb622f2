import type { TurnRequest } from '../../contract/api.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import { assertSameRequest, idempotentCall, recordedTurn } from '../engine/idempotency.ts'
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
  const workId = await workIdOf(turn.key)
  return { work_id: workId, session_id: turn.sessionId, idempotency_key: turn.key, duplicate: true }
}
