import { TurnlineError } from '../../contract/errors.ts'
import type { Lease } from '../../ports/coordinator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { coordinatorId } from '../engine/with-lease.ts'

/** How often a running turn looks for a cancellation request. */
export const CANCEL_POLL_MS = 1000

/** Thrown out of the model stream when the session's cancellation was requested. */
export class TurnCancelled extends Error {
  override readonly name = 'TurnCancelled'
}

/**
 * Called between model stream events: keeps the lease alive during long responses (renewed
 * every third of its life) and stops the turn when `POST …/cancel` asked for it.
 */
export function turnHeartbeat(deps: ServiceDeps, ref: SessionRef, lease: Lease) {
  let lastRenew = deps.clock.now()
  let lastPoll = deps.clock.now()
  return async (): Promise<void> => {
    const now = deps.clock.now()
    if (now - lastPoll >= CANCEL_POLL_MS) {
      lastPoll = now
      if (await deps.coordinator.cancelRequested(coordinatorId(ref))) {
        throw new TurnCancelled(`session ${ref.sessionId} was cancelled`)
      }
    }
    if (now - lastRenew < deps.defaults.leaseMs / 3) return
    lastRenew = now
    if (!(await deps.coordinator.renewLease(lease, deps.defaults.leaseMs))) {
      throw new TurnlineError('conflict', `lost the lease on session ${ref.sessionId}`)
    }
  }
}
