import type { TurnResponse } from '../../contract/api.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { type IdempotentCall, idempotentCall, recordedTurn } from '../engine/idempotency.ts'
import { respond } from '../engine/respond.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { Completion } from '../engine/thread-completion.ts'
import { completionOf, threadCompletedEvent } from '../engine/thread-completion.ts'
import { completedError, replay } from '../engine/turn-replay.ts'
import { TurnWriter } from '../engine/turn-writer.ts'
import { coordinatorId, withLease } from '../engine/with-lease.ts'
import { writableState } from '../engine/writable-state.ts'
import type { TurnOptions } from '../session-api.ts'
import { closeOpenTurn } from '../turn/close-turn.ts'
import { TurnMachine } from '../turn/turn-machine.ts'
import { assertVerified } from '../verifier/turn-changes.ts'

/**
 * `complete` ends the session with success — or, honestly, error_during_execution when its last
 * turn failed; `cancel` ends it as cancelled, failing any open turn's unanswered tool calls.
 * thread.completed is the last event; the commit rolls events.jsonl up completely. Cancelling
 * while a turn runs raises the coordinator's cancel flag and answers status `waiting` with no
 * events: the running turn stops at its next model event and ends the session cancelled.
 * Never refused for a tenant's quotas or turn slots (no model is called).
 */
export async function endSession(
  deps: ServiceDeps,
  ref: SessionRef,
  mode: EndMode,
  options: TurnOptions = {},
): Promise<TurnResponse> {
  const call = await idempotentCall(
    options.idempotencyKey,
    typeof mode === 'object' ? 'handoff' : mode,
    typeof mode === 'object' ? mode : {},
  )
  try {
    return await endLeased(deps, ref, mode, options, call)
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
  call: IdempotentCall | undefined,
): Promise<TurnResponse> {
  // No model is called: ending a session is never refused for a turn limit or quota.
  return withLease(deps, ref, call, 'never_refused', async (_lease, snapshot) => {
    const state = writableState(snapshot)
    const known = recordedTurn(state, call)
    if (known) return { response: await replay(deps, ref, known), record: known }
    if (snapshot.status === 'completed') throw completedError(ref)
    if (mode === 'complete') assertVerified(state, 'completing the session')
    const writer = new TurnWriter(deps, ref, snapshot, state, call, options.onEvent)
    const open = state.open_turn ?? undefined
    if (open) {
      if (mode !== 'cancel') {
        throw new TurnlineError(
          'conflict',
          `${open.turn_id} is still open (its tool calls have no result yet): run a turn to finish it, or cancel`,
        )
      }
      const turn = new TurnMachine(state, open)
      closeOpenTurn({
        dispatcher: writer.dispatcher,
        history: writer.history,
        turn,
        why: 'cancelled',
      })
      turn.apply({ type: 'turn_ended' })
    }
    const completion: Completion =
      mode === 'cancel'
        ? { subtype: 'cancelled', outcomeCode: 'cancelled' }
        : typeof mode === 'object'
          ? { subtype: 'error_during_execution', outcomeCode: 'handed_off' }
          : completionOf(state)
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
