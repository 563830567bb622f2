import type { TurnResponse } from '../../contract/api.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { type LeftOpen, leftOpen } from '../../contract/turn-left-open.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { TurnOptions } from '../session-api.ts'
import { endSession } from './end-session.ts'

/**
 * Whether an exec run without an Idempotency-Key ends its thread with its turn (`end_after_turn`,
 * as a keyed run's and a webhook delivery's do), so that a turn that paused and that a later
 * `POST …/turns` finishes ends the session too. Not where changes must be verified first
 * (`harness.verification: required`): completing the session then waits for `POST …/verify`.
 */
export function execEndsWithTurn(config: SessionConfig): boolean {
  return config.harness.verification !== 'required'
}

/**
 * The rest of an exec run without a key once its turn answered: a turn that stayed open (paused,
 * or waiting) leaves the session open (`open`); a turn that ended without ending the thread
 * (verification required) has the session completed now, refused (409) until it is verified.
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
