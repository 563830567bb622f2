import type { TurnResponse } from '../../contract/api.ts'
import type { TurnRecord } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { EndTurnRequest, Lease, QueuedIntent } from '../../ports/coordinator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionSnapshot } from '../../store/session-snapshot.ts'
import { type AdmittedStep, admitStep } from './admit-step.ts'
import { coordinatorRecord, type IdempotentCall, sessionScopedKey } from './idempotency.ts'
import { keepLease } from './lease-keeper.ts'
import type { ServiceDeps } from './service-deps.ts'
import { serviceLog } from './service-log.ts'
import { sessionBusy } from './session-busy.ts'
import { replay } from './turn-replay.ts'

export interface LeasedOutcome {
  response: TurnResponse
  /** Stored under the Idempotency-Key so a retry gets the same answer. */
  record?: TurnRecord
  /** Highest batch committed. */
  tip?: number
  /** When the last batch was committed (epoch ms): the session's last activity. */
  activeAt?: number
  /** Intents the committed batches applied (or had applied before): removed from the queue. */
  ackIntents?: string[]
  /** Work after the commit point still running (the manifest write; never rejects). */
  settling?: Promise<void>
}

/**
 * How a leased step is admitted (`admitStep`): `'admit'` checks the tenant's quotas and takes a
 * turn slot once the lease is held and a replay is ruled out; an
 * `AdmittedStep` is work inside a step admitted already; `'never_refused'` is only for ending a
 * session and recording an outcome, which no limit may block.
 */
export type LeaseAdmission = 'admit' | 'never_refused' | AdmittedStep

/** The step run under the lease, on the snapshot read under it and the intents that came with it. */
export type LeasedWork = (
  lease: Lease,
  snapshot: SessionSnapshot,
  intents: QueuedIntent[],
) => Promise<LeasedOutcome>

/** The coordinator's key for a session: tenant-scoped. */
export const coordinatorId = (ref: SessionRef) => `${ref.tenant}/${ref.sessionId}`

/**
 * Runs `work` holding the session's lease (two coordinator round trips in all, plus a renewal
 * every third of the lease's life while the work runs longer): a retried
 * Idempotency-Key is answered from its record without the lease (422 when the key came with a
 * different request); a held lease is 409 session_busy with Retry-After. Then the step is admitted
 * (`admission`): a refusal (429) releases the lease having read and written nothing. The lease is
 * released whatever happens.
 */
export async function withLease(
  deps: ServiceDeps,
  ref: SessionRef,
  call: IdempotentCall | undefined,
  admission: LeaseAdmission,
  work: LeasedWork,
): Promise<TurnResponse> {
  const begin = await deps.coordinator.beginTurn({
    sessionId: coordinatorId(ref),
    tenant: ref.tenant,
    leaseMs: deps.defaults.leaseMs,
    ...(call ? { idempotencyKey: sessionScopedKey(ref, call) } : {}),
  })
  if (begin.status === 'replay') {
    if (!call) throw new TurnlineError('internal', 'the coordinator replayed a call without a key')
    return replay(deps, ref, coordinatorRecord(begin.record.response, call))
  }
  if (begin.status === 'busy') {
    throw sessionBusy(ref.sessionId, begin)
  }
  const { lease } = begin
  // Renewed on a timer for as long as this invocation holds it, independent of stream events.
  const { coordinator, clock, log } = deps
  const keeper = keepLease({ coordinator, clock, leaseMs: deps.defaults.leaseMs, log }, lease)
  let ending: Promise<void> | undefined
  // endTurn starts as soon as the work is done, inside the admitted step: the turn slot is
  // given back while it runs (one round trip to the limiter and the coordinator, not two).
  const leased = async () => {
    const snapshot = await deps.sessions.open(ref, begin.tip)
    const done = await work(lease, snapshot, begin.intents)
    keeper.stop()
    ending = endTurn(deps, endTurnRequest({ deps, ref, call, lease, outcome: done }))
    return done
  }
  let outcome: LeasedOutcome
  try {
    outcome =
      admission === 'never_refused'
        ? await leased()
        : await admitStep(deps, ref.tenant, admission === 'admit' ? undefined : admission, leased)
  } catch (error) {
    keeper.stop()
    if (ending) await ending
    else await deps.coordinator.releaseLease(lease).catch(() => undefined)
    throw error
  }
  await Promise.all([ending, outcome.settling])
  return outcome.response
}

/**
 * Ends the turn in the coordinator; never rejects. endTurn and the manifest write both follow
 * the commit point and neither needs the other, so they run concurrently: one round trip of
 * latency instead of two. A crash between them leaves a tip ahead of the manifest, which readers
 * handle as any manifest that lags the log (docs/performance.md reasons it through).
 */
function endTurn(deps: ServiceDeps, request: EndTurnRequest): Promise<void> {
  return (
    deps.coordinator
      .endTurn(request)
      // Committed already: the answer stands; the lease expires and the tip is re-probed.
      .catch((error: unknown) => {
        const entry = { msg: 'ending the turn in the coordinator failed', error: String(error) }
        serviceLog(deps)(entry)
      })
  )
}

/** What the coordinator records as the step ends: the tip, the acknowledged intents, the answer. */
function endTurnRequest(input: {
  deps: ServiceDeps
  ref: SessionRef
  call: IdempotentCall | undefined
  lease: Lease
  outcome: LeasedOutcome
}): EndTurnRequest {
  const { deps, ref, call, lease, outcome } = input
  return {
    lease,
    tenant: ref.tenant,
    ...(outcome.tip !== undefined ? { tip: outcome.tip } : {}),
    ...(outcome.ackIntents?.length ? { ackIntents: outcome.ackIntents } : {}),
    // Something was committed: the session moves up the activity index, in the same round trip,
    // to the time of its last commit (what an index rebuilt from the manifests would say).
    ...(outcome.activeAt !== undefined
      ? {
          activity: {
            tenant: ref.tenant,
            workspace: ref.workspace,
            sessionId: ref.sessionId,
            atMs: outcome.activeAt,
          },
        }
      : {}),
    ...(call && outcome.record
      ? {
          idempotency: {
            key: sessionScopedKey(ref, call),
            ttlSeconds: deps.defaults.idempotencyTtlSeconds,
            record: {
              sessionId: coordinatorId(ref),
              turnId: outcome.record.turn_id,
              batch: outcome.record.last_batch,
              response: JSON.stringify(outcome.record),
            },
          },
        }
      : {}),
  }
}
