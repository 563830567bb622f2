import { TurnlineError } from '../../contract/errors.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'

/** Seconds a refused client is told to wait: about what a worker takes to run a few records. */
const RETRY_AFTER_SECONDS = 10

/**
 * Refuses new background work of a tenant that has as many records pending as it may
 * (TURNLINE_MAX_PENDING_WORK): 429 `rate_limited`, `details.reason: "pending_work"`, with
 * Retry-After — records leave the queue as they run, so a later try passes. Asked before a
 * request records anything (a background turn, exec, webhook delivery, response, loop step, or
 * the first step of a loop run); a run's next steps, schedule firings and revivals are the
 * deployment's own and never refused. Two requests at once may both pass at the last place:
 * the cap holds to within the requests in flight.
 */
export async function assertPendingRoom(
  deps: ServiceDeps,
  queue: WorkQueue,
  tenant: string,
): Promise<void> {
  const max = deps.defaults.tenantCaps?.pendingWork
  if (max === undefined) return
  const pending = await queue.countPending(tenant, max)
  if (pending < max) return
  throw new TurnlineError(
    'rate_limited',
    `too much background work pending: a tenant may have ${max} records waiting or running ` +
      `(TURNLINE_MAX_PENDING_WORK); retry once some have run`,
    {
      retryable: true,
      retryAfter: RETRY_AFTER_SECONDS,
      details: {
        reason: 'pending_work',
        limit: 'TURNLINE_MAX_PENDING_WORK',
        max,
        retry_after_seconds: RETRY_AFTER_SECONDS,
      },
    },
  )
}
