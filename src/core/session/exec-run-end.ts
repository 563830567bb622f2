import type { TurnResponse } from '../../contract/api.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { type LeftOpen, leftOpen } from '../../contract/turn-left-open.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { finishedAfter, replay } from '../engine/turn-replay.ts'
import type { TurnOptions } from '../session-api.ts'
import { endSession } from './end-session.ts'

/**
 * The rest of an exec run, keyed or not, once its turn answered. Its thread ends with its turn
 * (`end_after_turn`): a turn that stayed open (paused, or waiting) leaves the session open
 * (`open`), to be continued by `POST …/turns` — unless it is a keyed run's first answer replayed
 * to a retry and the tenant finished that turn by hand since (`finishedByHand`). A turn that
 * ended without ending the thread — its change waits for a verification the session requires
 * (`harness.verification: required`) — has the session completed now, which that check refuses
 * (409 `verification_required`): the run answers that, and the session waits for
 * `POST …/verify`, then `POST …/complete`.
 */
export async function execRunEnd(
  deps: ServiceDeps,
  ref: SessionRef,
  turn: TurnResponse,
  options: TurnOptions,
): Promise<{ events: ThreadEvent[]; open?: LeftOpen }> {
  const open = leftOpen(turn)
  if (open) {
    const key = options.idempotencyKey
    const finished = key === undefined ? undefined : await finishedByHand(deps, ref, key)
    return finished ? { events: finished.events } : { events: [], open }
  }
  if (turn.status === 'terminal') return { events: [] }
  const end = await endSession(deps, ref, 'complete', { ...options, idempotencyKey: undefined })
  return { events: end.events }
}

/**
 * A keyed run's turn answered open is either this request's (its session stays open) or its
 * first answer, replayed to a retry. If the tenant has finished that turn by hand since
 * (`POST …/turns` continued it to its end, or `POST …/cancel` ended it: the session is
 * completed), the retry answers that end as a webhook resend does (automation-run.ts): the
 * events after the pause, up to `thread.completed`, running nothing. Undefined otherwise.
 */
async function finishedByHand(
  deps: ServiceDeps,
  ref: SessionRef,
  key: string,
): Promise<TurnResponse | undefined> {
  const snapshot = await deps.sessions.open(ref)
  if (snapshot.status !== 'completed') return undefined
  const record = parseEngineState(snapshot.state).recent_turns.find((r) => r.key === key)
  if (!record || record.last_batch >= snapshot.lastBatch) return undefined
  return replay(deps, ref, finishedAfter(record, key, snapshot.lastBatch))
}
