import type { TimerClock } from '../../ports/clock.ts'
import type { Coordinator, Lease } from '../../ports/coordinator.ts'
import { serviceLog } from './service-log.ts'

/** Leases found taken by another invocation while this one still ran. */
const lostLeases = new WeakSet<Lease>()

/** True once a renewal found the lease held by someone else (the turn must stop). */
export function isLeaseLost(lease: Lease): boolean {
  return lostLeases.has(lease)
}

export interface LeaseKeeper {
  /** Stops renewing (call before the lease is released or ended). */
  stop(): void
}

/**
 * Keeps a lease alive for as long as the invocation holds it: renewed on a timer every third of
 * its life, whatever the turn is doing — waiting for a model's first byte, a tool, a slow
 * store — not only between stream events. A renewal that finds the lease taken marks it lost;
 * the turn stops at its next heartbeat, and its commit would be fenced anyway (create-only).
 * A renewal that fails (coordinator unreachable) is retried at the next tick.
 */
export function keepLease(
  deps: {
    coordinator: Coordinator
    clock: TimerClock
    leaseMs: number
    log?: ((entry: Record<string, unknown>) => void) | undefined
  },
  lease: Lease,
): LeaseKeeper {
  const { leaseMs } = deps
  const everyMs = Math.max(50, Math.floor(leaseMs / 3))
  let stopped = false
  let cancel: (() => void) | undefined

  const renew = async () => {
    try {
      const held = await deps.coordinator.renewLease(lease, leaseMs)
      if (!held && !stopped) lostLeases.add(lease)
    } catch (error) {
      serviceLog(deps)({
        msg: 'renewing the lease failed; retrying at the next tick',
        session: lease.sessionId,
        error: String(error),
      })
    }
  }
  const schedule = () => {
    if (stopped || lostLeases.has(lease)) return
    cancel = deps.clock.setTimer(everyMs, () => {
      void renew().then(schedule)
    })
  }
  schedule()
  return {
    stop() {
      stopped = true
      cancel?.()
    },
  }
}
