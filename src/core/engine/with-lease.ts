import type { TurnResponse } from '../../contract/api.ts'
import type { TurnRecord } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { Lease, QueuedIntent } from '../../ports/coordinator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionSnapshot } from '../../store/session-snapshot.ts'
import type { ServiceDeps } from './service-deps.ts'
import { replay } from './turn-replay.ts'

export interface LeasedOutcome {
  response: TurnResponse
  /** Stored under the Idempotency-Key so a retry gets the same answer. */
  record?: TurnRecord
  /** Highest batch committed. */
  tip?: number
  /** Intents the committed batches applied (or had applied before): removed from the queue. */
  ackIntents?: string[]
}

/** The coordinator's key for a session: tenant-scoped. */
export const coordinatorId = (ref: SessionRef) => `${ref.tenant}/${ref.sessionId}`

/**
 * Runs `work` holding the session's lease (two coordinator round trips in all): a retried
 * Idempotency-Key is answered from its record without the lease; a held lease is
 * 409 session_busy with Retry-After. The lease is released whatever happens.
 */
export async function withLease(
  deps: ServiceDeps,
  ref: SessionRef,
  key: string | undefined,
  work: (
    lease: Lease,
    snapshot: SessionSnapshot,
    intents: QueuedIntent[],
  ) => Promise<LeasedOutcome>,
): Promise<TurnResponse> {
  const id = coordinatorId(ref)
  const begin = await deps.coordinator.beginTurn({
    sessionId: id,
    tenant: ref.tenant,
    leaseMs: deps.defaults.leaseMs,
    ...(key ? { idempotencyKey: key } : {}),
  })
  if (begin.status === 'replay') {
    if (begin.record.sessionId !== id) {
      throw new TurnlineError(
        'invalid_input',
        'this Idempotency-Key was already used for another session; use a new key',
        { details: { field: 'Idempotency-Key' } },
      )
    }
    return replay(deps, ref, begin.record.response)
  }
  if (begin.status === 'busy') {
    throw new TurnlineError('session_busy', `session ${ref.sessionId} is running another turn`, {
      retryAfter: Math.max(1, Math.ceil(begin.retryAfterMs / 1000)),
    })
  }
  const { lease } = begin
  let outcome: LeasedOutcome
  try {
    const snapshot = await deps.sessions.open(ref, begin.tip)
    outcome = await work(lease, snapshot, begin.intents)
  } catch (error) {
    await deps.coordinator.releaseLease(lease).catch(() => undefined)
    throw error
  }
  try {
    await deps.coordinator.endTurn({
      lease,
      tenant: ref.tenant,
      ...(outcome.tip !== undefined ? { tip: outcome.tip } : {}),
      ...(outcome.ackIntents?.length ? { ackIntents: outcome.ackIntents } : {}),
      ...(key && outcome.record
        ? {
            idempotency: {
              key,
              ttlSeconds: deps.defaults.idempotencyTtlSeconds,
              record: {
                sessionId: id,
                turnId: outcome.record.turn_id,
                batch: outcome.record.last_batch,
                response: JSON.stringify(outcome.record),
              },
            },
          }
        : {}),
    })
  } catch (error) {
    // Committed already: the answer stands; the lease expires and the tip is re-probed.
    ;(deps.log ?? console.warn)({
      msg: 'ending the turn in the coordinator failed',
      error: String(error),
    })
  }
  return outcome.response
}
