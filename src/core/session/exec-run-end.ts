import type { TurnResponse } from '../../contract/api.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { type LeftOpen, leftOpen } from '../../contract/turn-left-open.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { TurnOptions } from '../session-api.ts'
import { endSession } from './end-session.ts'

/**
 * The rest of an exec run, keyed or not, once its turn answered. Its thread ends with its turn
 * (`end_after_turn`): a turn that stayed open (paused, or waiting) leaves the session open
 * (`open`), to be continued by `POST …/turns`. A turn that ended without ending the thread —
 * its change waits for a verification the session requires (`harness.verification: required`)
 * — has the session completed now, which that check refuses (409 `verification_required`): the
 * run answers that, and the session waits for `POST …/verify`, then `POST …/complete`.
 */
export async function execRunEnd(
  deps: ServiceDeps,
  ref: SessionRef,
  turn: TurnResponse,
  options: TurnOptions,
): Promise<{ events: ThreadEvent[]; open?: LeftOpen }> {
  const open = leftOpen(turn)
  if (open) return { events: [], open }
  if (turn.status === 'terminal') return { events: [] }
  const end = await endSession(deps, ref, 'complete', { ...options, idempotencyKey: undefined })
  return { events: end.events }
}
