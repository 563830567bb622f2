import type { TurnResponse } from '../../contract/api.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { respond } from '../engine/respond.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { Completion } from '../engine/thread-completion.ts'
import { threadCompletedEvent } from '../engine/thread-completion.ts'
import { completedError, replay } from '../engine/turn-replay.ts'
import { TurnWriter } from '../engine/turn-writer.ts'
import { coordinatorId, withLease } from '../engine/with-lease.ts'
import { writableState } from '../engine/writable-state.ts'
import type { TurnOptions } from '../session-api.ts'
import { closeOpenTurn } from '../turn/close-turn.ts'

/**
 * `complete` ends the session with success — or, honestly, error_during_execution when its last
 * turn failed; `cancel` ends it as cancelled, failing any open turn's unanswered tool calls.
 * thread.completed is the last event; the commit rolls events.jsonl up completely. Cancelling
 * while a turn runs raises the coordinator's cancel flag and answers status `waiting` with no
 * events: the running turn stops at its next model event and ends the session cancelled.
 */
export async function endSession(
  deps: ServiceDeps,
  ref: SessionRef,
  mode: EndMode,
  options: TurnOptions = {},
): Promise<TurnResponse> {
  const key = options.idempotencyKey
  try {
    return await endLeased(deps, ref, mode, options, key)
  } catch (error) {
    if (mode !== 'cancel' || !isTurnlineError(error, 'session_busy')) throw error
    // A turn is running: ask it to stop. It ends the session cancelled at its next model event.
    await deps.coordinator.requestCancel(coordinatorId(ref), deps.defaults.leaseMs)
    const manifest = await deps.sessions.manifest(ref)
    return { turn_id: 'running', status: 'waiting', events: [], next_seq: manifest.last_seq + 1 }
  }
}

/** `handoff` ends the session as VT Code's HandedOff outcome (error_during_execution). */
export type EndMode = 'complete' | 'cancel' | { handoff: string }

function endLeased(
  deps: ServiceDeps,
  ref: SessionRef,
  mode: EndMode,
  options: TurnOptions,
  key: string | undefined,
): Promise<TurnResponse> {
  return withLease(deps, ref, key, async (_lease, snapshot) => {
    const state = writableState(snapshot)
    const known = key ? state.recent_turns.find((r) => r.key === key) : undefined
    if (known) return { response: await replay(deps, ref, known), record: known }
    if (snapshot.status === 'completed') throw completedError(ref)
    const writer = new TurnWriter(deps, ref, snapshot, state, key, options.onEvent)
    const open = state.open_turn ?? undefined
    if (open) {
      if (mode !== 'cancel') {
        throw new TurnlineError(
          'conflict',
          `${open.turn_id} is still open (its tool calls have no result yet): run a turn to finish it, or cancel`,
        )
      }
      closeOpenTurn(writer.dispatcher, writer.history, open, 'cancelled')
      state.open_turn = null
    }
    const completion: Completion =
      mode === 'cancel'
        ? { subtype: 'cancelled', outcomeCode: 'cancelled' }
        : typeof mode === 'object'
          ? { subtype: 'error_during_execution', outcomeCode: 'handed_off' }
          : state.last_failure
            ? { subtype: 'error_during_execution', outcomeCode: 'failed' }
            : { subtype: 'success', outcomeCode: 'success' }
    const stopReason =
      typeof mode === 'object'
        ? `Task handed off to \`${mode.handoff}\``
        : completion.subtype === 'error_during_execution'
          ? (state.last_failure ?? undefined)
          : undefined
    writer.dispatcher.emit(
      threadCompletedEvent(snapshot.threadId, ref.sessionId, state, completion, stopReason),
    )
    const turnId = open?.turn_id ?? `turn-${state.turn_counter}`
    return respond(deps, ref, writer, { turnId, status: 'terminal', remember: true })
  })
}
