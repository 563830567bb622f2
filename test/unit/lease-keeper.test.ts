import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { isLeaseLost, keepLease } from '../../src/core/engine/lease-keeper.ts'
import type { Lease } from '../../src/ports/coordinator.ts'
import { testClock } from '../support/test-clock.ts'

async function lease(coordinator: MemoryCoordinator, leaseMs: number): Promise<Lease> {
  const begin = await coordinator.beginTurn({ sessionId: 's', tenant: 't', leaseMs })
  if (begin.status !== 'acquired') throw new Error(`expected the lease, got ${begin.status}`)
  return begin.lease
}

describe('keepLease', () => {
  it('renews on a timer, with no other activity, until stopped', async () => {
    const clock = testClock()
    const coordinator = new MemoryCoordinator({ clock })
    const held = await lease(coordinator, 150)
    const keeper = keepLease({ coordinator, clock, leaseMs: 150 }, held)
    await clock.advance(500)
    expect(
      (await coordinator.beginTurn({ sessionId: 's', tenant: 't', leaseMs: 150 })).status,
    ).toBe('busy')
    expect(isLeaseLost(held)).toBe(false)
    keeper.stop()
    expect(clock.pending).toBe(0)
    await clock.advance(300)
    expect(
      (await coordinator.beginTurn({ sessionId: 's', tenant: 't', leaseMs: 150 })).status,
    ).toBe('acquired')
  })

  it('marks the lease lost when another invocation holds it', async () => {
    const clock = testClock()
    const coordinator = new MemoryCoordinator({ clock })
    const held = await lease(coordinator, 150)
    await coordinator.releaseLease(held)
    await lease(coordinator, 10_000)
    const keeper = keepLease({ coordinator, clock, leaseMs: 150 }, held)
    await clock.advance(200)
    keeper.stop()
    expect(isLeaseLost(held)).toBe(true)
  })
})
