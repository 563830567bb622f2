import { TurnlineError } from '../../contract/errors.ts'
import type { WorkQueue } from '../../store/work-queue.ts'
import { assertRoom, withPlace } from '../engine/place-admission.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { workIdOf } from './queue-work.ts'

/** Seconds a refused client is told to wait: about what a worker takes to run a few records. */
const RETRY_AFTER_SECONDS = 10

/**
 * Records new background work of a tenant (`write`) only when it has fewer records pending than
 * it may (TURNLINE_MAX_PENDING_WORK), exactly however many requests of it arrive at once on
 * however many instances (withPlace: the pending records listed, plus the places held by
 * requests still recording theirs); else 429 `rate_limited`, `details.reason: "pending_work"`,
 * with Retry-After, before anything is written — records leave the queue as they run, and each
 * frees its place then, so a later try passes. Taken by a request that records something new (a
 * background turn, exec, webhook delivery, response, loop step, or the first step of a loop
 * run); a run's next steps, schedule firings and revivals are the deployment's own and never
 * refused, nor is a duplicate (the caller knows one before it asks).
 */
export async function withPendingPlace<T>(
  deps: ServiceDeps,
  queue: WorkQueue,
  tenant: string,
  write: () => Promise<T>,
  /** The record the write makes, where it is known before (a session's turn under its key). */
  record?: { sessionId: string; idempotencyKey: string },
): Promise<T> {
  const name = record && `${record.sessionId}/${await workIdOf(record.idempotencyKey)}.json`
  const place = pendingPlace(deps, queue, tenant, name)
  return place ? withPlace(place, write) : write()
}

/**
 * Refuses as withPendingPlace would, holding nothing: a loop created with `autorun` is refused
 * before it is created when its run would be (the run then takes its place exactly).
 */
export async function assertPendingRoom(deps: ServiceDeps, queue: WorkQueue, tenant: string) {
  const place = pendingPlace(deps, queue, tenant)
  if (place) await assertRoom(place)
}

function pendingPlace(deps: ServiceDeps, queue: WorkQueue, tenant: string, record?: string) {
  const max = deps.defaults.tenantCaps?.pendingWork
  if (max === undefined) return undefined
  return {
    book: deps.coordinator,
    scope: `pending-work/${tenant}`,
    max,
    stored: (upTo: number) => queue.listPending(tenant, upTo),
    // The record's name when known (`<session>/<work>.json`, as listed): a record listed already
    // is a retry, which adds nothing. Else the hold has its own name, and a request that has
    // written its record and not yet dropped its hold is counted twice for that moment.
    id: record ?? `hold-${deps.ids.uuid()}`,
    refused: () => pendingWorkRefusal(max),
  }
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
