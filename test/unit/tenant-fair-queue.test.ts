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

/** The background worker's places (`places`): a lone tenant fills them, another still starts. */
describe('TenantFairQueue with places', () => {
  const queue = (places: number) =>
    new TenantFairQueue<string>({
      maxWaiting: 1000,
      maxWaitingPerTenant: 1000,
      maxRunningPerTenant: places,
      places,
    })
  /** Queues items named by their tenant's letter and a number: `a0` is tenant a's. */
  const add = (q: TenantFairQueue<string>, ...items: string[]) => {
    for (const item of items) q.add(item.slice(0, 1), item, item)
  }
  const takeAll = (q: TenantFairQueue<string>) => {
    const taken: string[] = []
    for (let next = q.take(); next; next = q.take()) taken.push(next.item)
    return taken
  }

  it('gives a lone tenant every place', () => {
    const q = queue(16)
    for (let i = 0; i < 20; i++) q.add('a', `a${i}`, `a${i}`)
    expect(takeAll(q)).toHaveLength(16)
  })

  it("starts another tenant's work at once while one holds every place, then no more", () => {
    const q = queue(16)
    for (let i = 0; i < 20; i++) q.add('a', `a${i}`, `a${i}`)
    takeAll(q)
    add(q, 'b0', 'b1', 'c0')
    // The place lent to the lone tenant is given back at once: one more, and only one.
    expect(takeAll(q)).toEqual(['b0'])
    // One of the lone tenant's ends: 16 run again, as many as there are places.
    q.done('a')
    expect(takeAll(q)).toEqual([])
    // Another ends: the free place goes to the tenant with none running.
    q.done('a')
    expect(takeAll(q)).toEqual(['c0'])
  })

  it('keeps the last place from a tenant holding the others while another waits', () => {
    const q = queue(3)
    add(q, 'a0', 'a1')
    expect(takeAll(q)).toEqual(['a0', 'a1'])
    add(q, 'a2', 'b0', 'b1')
    // The last place: b's (it holds none), not a's third; then every place is taken.
    expect(takeAll(q)).toEqual(['b0'])
    q.done('b')
    expect(takeAll(q)).toEqual(['b1'])
    q.done('b')
    // Only a's work waits now: it takes the last place too.
    expect(takeAll(q)).toEqual(['a2'])
  })

  it('with one place, runs one item at a time whoever waits', () => {
    const q = queue(1)
    add(q, 'a0', 'a1')
    expect(takeAll(q)).toEqual(['a0'])
    add(q, 'b0')
    expect(takeAll(q)).toEqual([])
    q.done('a')
    expect(takeAll(q)).toEqual(['b0'])
  })
})
