import { describe, expect, it } from 'vitest'
import { TenantFairQueue } from '../../src/shared/tenant-fair-queue.ts'

/** The background worker's waiting work: shared between tenants, bounded per tenant. */
describe('TenantFairQueue', () => {
  it("keeps one tenant's part bounded, so another tenant's work is still queued", () => {
    const queue = new TenantFairQueue<string>({
      maxWaiting: 10,
      maxWaitingPerTenant: 3,
      maxRunningPerTenant: 10,
    })
    for (let i = 0; i < 5; i++) queue.add('noisy', `n${i}`, `n${i}`)
    expect(queue.has('noisy', 'n3')).toBe(false)
    expect(queue.add('quiet', 'q0', 'q0')).toBe(true)
  })

  it('starts the tenant with the fewest running, then the one started least recently', () => {
    const queue = new TenantFairQueue<string>({
      maxWaiting: 100,
      maxWaitingPerTenant: 100,
      maxRunningPerTenant: 2,
    })
    for (let i = 0; i < 4; i++) queue.add('a', `a${i}`, `a${i}`)
    expect(queue.take()?.item).toBe('a0')
    queue.add('b', 'b0', 'b0')
    queue.add('b', 'b1', 'b1')
    expect(queue.take()?.item).toBe('b0')
    expect(queue.take()?.item).toBe('a1')
    expect(queue.take()?.item).toBe('b1')
    // Both tenants run 2, their most: nothing more starts until one ends.
    expect(queue.take()).toBeUndefined()
    queue.done('a')
    expect(queue.take()?.item).toBe('a2')
  })
})
