import type { SessionActivity } from '../../contract/api.ts'
import type { StandingLease } from '../../ports/coordinator.ts'
import { heldRetryAfter } from '../../shared/held-retry-after.ts'

/**
 * Whether anyone is running a session's open turn, from its lease (`activity.turn_state`). A turn
 * runs under the session's lease and its heartbeat renews it every third of its life, so:
 *
 * - `running`: the lease is held and was renewed lately — an instance is working on the session.
 * - `interrupted`: the turn is `open` (it committed part of its work and never ended) but nobody
 *   holds the lease, or its holder stopped renewing it — the instance running it died (a crash, a
 *   kill -9). The next `POST …/turns` takes the session over and resumes the turn.
 *
 * A turn waiting on a command or a person without a lease is neither: nothing is meant to run it
 * until the command ends or the person answers, so `turn_state` is absent there.
 */
export function withTurnState(
  activity: SessionActivity,
  lease: StandingLease | undefined,
  leaseMs: number,
  nowMs: number,
): SessionActivity {
  const turnState = turnStateOf(activity.state, lease, leaseMs, nowMs)
  return turnState ? { ...activity, turn_state: turnState } : activity
}

/** `turn_state` of a session waiting in `state` whose lease stands as `lease` (above). */
export function turnStateOf(
  state: SessionActivity['state'],
  lease: StandingLease | undefined,
  leaseMs: number,
  nowMs: number,
): SessionActivity['turn_state'] {
  const live =
    lease !== undefined &&
    heldRetryAfter({ remainingMs: lease.remainingMs, ttlMs: leaseMs }, nowMs).state === 'running'
  if (live) return 'running'
  return state === 'open' ? 'interrupted' : undefined
}
