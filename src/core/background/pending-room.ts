import { TurnlineError } from '../../contract/errors.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import { withPlace } from '../engine/place-admission.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { workIdOf } from './queue-work.ts'

/** Seconds a refused client is told to wait: about what a worker takes to run a few records. */
const RETRY_AFTER_SECONDS = 10

/** The record a write makes, named before it is written: `<session>/<work id of the key>.json`. */
export interface PendingRecord {
  sessionId: string
  idempotencyKey: string
}

/**
 * Records new background work of a tenant (`write`) only when it has fewer records pending than
 * it may (TURNLINE_MAX_PENDING_WORK), exactly however many requests of it arrive at once on
 * however many instances (withPlace: the pending records listed, plus the places held by
 * requests still recording theirs); else 429 `rate_limited`, `details.reason: "pending_work"`,
 * with Retry-After, before anything is written — records leave the queue as they run, and each
 * frees its place then, so a later try passes. Taken by a request that records something new (a
 * background turn, exec, webhook delivery, response, loop step, or the first step of a loop
 * run); a run's next steps, schedule firings and revivals are the deployment's own and never
 * refused, nor is a duplicate.
 *
 * The hold bears the name of the record the write makes (`record`, chosen before the write), so
 * a record listed already is a retry that adds nothing (never refused), and a record written
 * whose hold is not dropped yet is counted once. `earlier` answers a retry whose record ran and
 * left the queue, when the tenant is at the cap (else the write answers it as before).
 */
export async function withPendingPlace<T>(
  deps: ServiceDeps,
  queue: WorkQueue,
  tenant: string,
  write: () => Promise<T>,
  record: PendingRecord,
  earlier?: () => Promise<T | undefined>,
): Promise<T> {
  const max = deps.defaults.tenantCaps?.pendingWork
  if (max === undefined) return write()
  const place = {
    book: deps.coordinator,
    scope: `pending-work/${tenant}`,
    max,
    stored: (upTo: number) => queue.listPending(tenant, upTo),
    // As listed: `<session>/<work>.json`.
    id: `${record.sessionId}/${await workIdOf(record.idempotencyKey)}.json`,
    holder: deps.ids.token(),
    refused: () => pendingWorkRefusal(max),
  }
  return withPlace(place, write, earlier)
}

function pendingWorkRefusal(max: number): TurnlineError {
  return new TurnlineError(
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
