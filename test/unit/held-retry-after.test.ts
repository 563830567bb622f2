import { describe, expect, it } from 'vitest'
import {
  firstFreeRetryAfter,
  heldRetryAfter,
  leaseAcquiredAt,
  stampedLeaseId,
} from '../../src/shared/held-retry-after.ts'

/** A 60 s lease renewed every 20 s, asked about at `NOW`. */
const TTL = 60_000
const NOW = 1_800_000_000_000

describe('heldRetryAfter', () => {
  it('retries a young running turn within a second, not when its lease would lapse', () => {
    // The case: 59 s left on the lease, the turn began 2 s ago.
    expect(
      heldRetryAfter({ remainingMs: 59_000, ttlMs: TTL, acquiredAtMs: NOW - 2000 }, NOW),
    ).toEqual({ retryAfterMs: 1000, state: 'running', heldForMs: 2000 })
  })

  it('waits a quarter of a running turn’s age, at most one renewal period', () => {
    const at = (ageMs: number) =>
      heldRetryAfter({ remainingMs: 50_000, ttlMs: TTL, acquiredAtMs: NOW - ageMs }, NOW)
        .retryAfterMs
    expect(at(40_000)).toBe(10_000)
    expect(at(600_000)).toBe(20_000)
  })

  it('waits out the lease of a holder that stopped renewing it', () => {
    // 45 s since the last renewal (more than two periods of 20 s): 15 s left until it lapses.
    expect(
      heldRetryAfter({ remainingMs: 15_000, ttlMs: TTL, acquiredAtMs: NOW - 50_000 }, NOW),
    ).toEqual({ retryAfterMs: 15_000, state: 'silent' })
  })

  it('treats a lease without an acquisition stamp as running for one renewal period', () => {
    expect(heldRetryAfter({ remainingMs: 58_000, ttlMs: TTL }, NOW)).toEqual({
      retryAfterMs: 20_000,
      state: 'running',
    })
  })

  it('never answers less than 1 ms, nor a negative age from a clock behind the stamp', () => {
    const ahead = heldRetryAfter({ remainingMs: 59_000, ttlMs: TTL, acquiredAtMs: NOW + 500 }, NOW)
    expect(ahead).toEqual({ retryAfterMs: 1000, state: 'running', heldForMs: 0 })
    expect(heldRetryAfter({ remainingMs: -3, ttlMs: TTL }, NOW).retryAfterMs).toBe(1)
  })
})

describe('firstFreeRetryAfter', () => {
  it('answers the shortest wait of several held slots', () => {
    const slots = [
      { remainingMs: 59_000, ttlMs: TTL, acquiredAtMs: NOW - 400_000 },
      { remainingMs: 5_000, ttlMs: TTL, acquiredAtMs: NOW - 400_000 },
      { remainingMs: 45_000, ttlMs: TTL, acquiredAtMs: NOW - 30_000 },
    ]
    expect(firstFreeRetryAfter(slots, NOW)).toEqual({ retryAfterMs: 5000, state: 'silent' })
  })
})

describe('stamped lease ids', () => {
  it('carry their acquisition time; others carry none', () => {
    expect(leaseAcquiredAt(stampedLeaseId(NOW + 0.7, 'abc.def'))).toBe(NOW)
    expect(leaseAcquiredAt('0f3a9c')).toBeUndefined()
    expect(leaseAcquiredAt('slot-of-a-dead-instance')).toBeUndefined()
  })
})
