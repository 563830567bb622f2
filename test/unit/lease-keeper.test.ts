import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { isLeaseLost, keepLease } from '../../src/core/engine/lease-keeper.ts'
import type { Lease } from '../../src/ports/coordinator.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function lease(coordinator: MemoryCoordinator, leaseMs: number): Promise<Lease> {
  const begin = await coordinator.beginTurn({ sessionId: 's', tenant: 't', leaseMs })
  if (begin.status !== 'acquired') throw new Error(`expected the lease, got ${begin.status}`)
  return begin.lease
}

describe('keepLease', () => {
  it('renews on a timer, with no other activity, until stopped', async () => {
    const coordinator = new MemoryCoordinator()
    const held = await lease(coordinator, 150)
    const keeper = keepLease({ coordinator, leaseMs: 150 }, held)
    await sleep(500)
    expect(
      (await coordinator.beginTurn({ sessionId: 's', tenant: 't', leaseMs: 150 })).status,
    ).toBe('busy')
    expect(isLeaseLost(held)).toBe(false)
    keeper.stop()
    await sleep(300)
    expect(
      (await coordinator.beginTurn({ sessionId: 's', tenant: 't', leaseMs: 150 })).status,
    ).toBe('acquired')
  })

  it('marks the lease lost when another invocation holds it', async () => {
    const coordinator = new MemoryCoordinator()
    const held = await lease(coordinator, 150)
    await coordinator.releaseLease(held)
    await lease(coordinator, 10_000)
    const keeper = keepLease({ coordinator, leaseMs: 150 }, held)
    await sleep(200)
    keeper.stop()
    expect(isLeaseLost(held)).toBe(true)
  })
})
