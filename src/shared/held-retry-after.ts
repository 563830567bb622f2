/**
 * How long a caller refused by a held lease (a session's turn lease, a tenant's turn slot) should
 * wait before trying again — from what the lease says about the run holding it, not from its
 * deadline alone. A holder renews its lease every third of the lease's life (`keepLease`, the
 * turn-slot renewal), so the time left tells when it last renewed:
 *
 * - **silent**: no renewal for longer than two renewal periods — the holder has most likely died.
 *   The lease lapses when its time runs out and another run may take it then: wait exactly that.
 * - **running**: renewed lately, so the run is alive and may end any moment. How long it has run
 *   already is the best guess of how long it still runs (a run's remaining time grows with its
 *   age), so the wait is a quarter of its age, at least 1 s and at most one renewal period: a
 *   turn that ends in 4 s is retried within seconds, a ten-minute one is polled every
 *   renewal period, never every second.
 *
 * Leases carry the epoch ms they were acquired at as the prefix of their token or slot id
 * (`<ms>.<random>`, `stampedLeaseId`); one without it (written by an older release) is treated
 * as running for one renewal period.
 */
export interface HeldLease {
  /** Time until the lease lapses unless renewed (ms). */
  remainingMs: number
  /** The lease's full life, as its holder renews it (ms). */
  ttlMs: number
  /** When it was acquired (epoch ms), when known. */
  acquiredAtMs?: number | undefined
}

export type HeldRunState = 'running' | 'silent'

export interface HeldRetryAfter {
  retryAfterMs: number
  state: HeldRunState
  /** How long the run has held the lease, when known (ms). */
  heldForMs?: number
}

/** The renewal period of a lease of `ttlMs` (as `keepLease` renews it). */
export function renewalPeriodMs(ttlMs: number): number {
  return Math.max(50, Math.floor(ttlMs / 3))
}

/** The wait for one held lease at `nowMs`. */
export function heldRetryAfter(lease: HeldLease, nowMs: number): HeldRetryAfter {
  const remainingMs = Math.max(1, lease.remainingMs)
  const period = renewalPeriodMs(lease.ttlMs)
  const sinceRenewalMs = lease.ttlMs - remainingMs
  if (sinceRenewalMs > 2 * period) return { retryAfterMs: remainingMs, state: 'silent' }
  const heldForMs =
    lease.acquiredAtMs === undefined ? undefined : Math.max(0, nowMs - lease.acquiredAtMs)
  const guessMs = heldForMs === undefined ? period : Math.floor(heldForMs / 4)
  const retryAfterMs = Math.min(Math.max(1000, guessMs), period, remainingMs)
  return { retryAfterMs, state: 'running', ...(heldForMs === undefined ? {} : { heldForMs }) }
}

/** The wait until the first of several held leases is likely free (the shortest wait). */
export function firstFreeRetryAfter(leases: readonly HeldLease[], nowMs: number): HeldRetryAfter {
  const waits = leases.map((lease) => heldRetryAfter(lease, nowMs))
  const first = waits.reduce<HeldRetryAfter | undefined>(
    (best, wait) => (best === undefined || wait.retryAfterMs < best.retryAfterMs ? wait : best),
    undefined,
  )
  return first ?? { retryAfterMs: 1000, state: 'silent' }
}

/** A lease id stamped with its acquisition time: `<epoch ms>.<random>`. */
export function stampedLeaseId(nowMs: number, random: string): string {
  return `${Math.floor(nowMs)}.${random}`
}

/** The acquisition time a stamped lease id carries; undefined for an unstamped one. */
export function leaseAcquiredAt(id: string): number | undefined {
  const match = /^(\d{1,15})\./.exec(id)
  return match?.[1] === undefined ? undefined : Number(match[1])
}
