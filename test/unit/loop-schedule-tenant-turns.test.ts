import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { SimulatedCrash } from '../support/crashing-object-store.ts'
import { everyMinute, loopInstance } from '../support/loop-instance.ts'
import { testClock } from '../support/test-clock.ts'

/**
 * The schedule sweep between tenants, on the real engine and a memory store whose reads of one
 * tenant's objects are slow: a tenant with forty schedules due at the same minute, listed first,
 * must not hold back the firing of another tenant's, and every schedule still fires once per due
 * minute — on two instances sweeping at once, and on the sweep after. The same for the sweep's
 * revival of a run whose step record a crash lost, beside forty runs of the busy tenant.
 */
const BUSY = 'a-busy'
const QUIET = 'z-quiet'
const BUSY_LOOPS = 40

/**
 * The busy tenant's objects answer a turn of the event loop late, as a slow store would; the
 * reads of loop pointers are noted in order; while `dying`, the quiet tenant's instance dies at
 * its first write of a work record.
 */
class SlowForBusy extends MemoryObjectStore {
  dying = false
  readonly loopReads: string[] = []
  override async get(key: string) {
    if (key.includes('.turnline/loops/')) this.loopReads.push(key.includes(BUSY) ? BUSY : QUIET)
    if (key.includes(BUSY)) await new Promise((resolve) => setImmediate(resolve))
    return super.get(key)
  }
  override put(...args: Parameters<MemoryObjectStore['put']>) {
    const [key] = args
    if (this.dying && key.includes(QUIET) && key.includes('.turnline/work/pending/')) {
      return Promise.reject(new SimulatedCrash('the instance died'))
    }
    return super.put(...args)
  }
}

async function deployment() {
  const store = new SlowForBusy()
  const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30))
  const coordinator = new MemoryCoordinator()
  const first = loopInstance({ store, clock, coordinator })
  for (let n = 0; n < BUSY_LOOPS; n++) await first.createLoop(BUSY, everyMinute(`busy-${n}`))
  for (const n of [0, 1, 2]) await first.createLoop(QUIET, everyMinute(`quiet-${n}`))
  return { store, clock, first, second: loopInstance({ store, clock, coordinator }) }
}

describe('the schedule sweep between tenants', () => {
  it("fires another tenant's due schedules within a turn of each tenant, not after all of the busy tenant's", async () => {
    const { clock, first } = await deployment()
    await clock.advance(60_000)
    const fired = await first.fireSchedules()
    expect(fired.skipped).toBe(0)
    expect(fired.started).toHaveLength(BUSY_LOOPS + 3)
    // The quiet tenant's k-th loop waits for at most k of the busy tenant's (one lane each):
    // it came after all forty before.
    const order = fired.started.map((at) => at.tenant)
    const quiet = order.flatMap((tenant, index) => (tenant === QUIET ? [index] : []))
    expect(quiet).toHaveLength(3)
    for (const [k, index] of quiet.entries()) expect(index).toBeLessThan(2 * (k + 1))
  })

  it('fires each schedule once per due minute on two instances sweeping at once, and again at the next', async () => {
    const { clock, first, second } = await deployment()
    await clock.advance(60_000)
    const [a, b] = await Promise.all([first.fireSchedules(), second.fireSchedules()])
    const runs = new Set(
      [...a.started, ...b.started].map((at) => `${at.tenant}/${at.session_id}/${at.work_id}`),
    )
    expect(runs.size).toBe(BUSY_LOOPS + 3)
    expect((await first.listWork()).items).toHaveLength(BUSY_LOOPS + 3)
    // The same minute again: nothing new on either.
    expect((await second.fireSchedules()).started).toEqual([])
    const loops = [...Array(BUSY_LOOPS).keys()].map((n) => [BUSY, `busy-${n}`] as const)
    for (const [tenant, loopId] of [...loops, [QUIET, 'quiet-0'] as const]) {
      expect(await first.getLoop(tenant, loopId)).toMatchObject({
        schedule: { last_slot: '2026-01-01T00:01:00.000Z' },
        run: { trigger: 'schedule', state: 'running' },
      })
    }
  })

  it("revives another tenant's run whose step record was lost before checking all of the busy tenant's runs", async () => {
    const store = new SlowForBusy()
    const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30))
    const service = loopInstance({ store, clock })
    const { schedule: _, ...once } = everyMinute('x')
    for (let n = 0; n < BUSY_LOOPS; n++) {
      await service.createLoop(BUSY, { ...once, loop_id: `busy-${n}` })
      await service.runLoop(BUSY, `busy-${n}`, { trigger: 'api' })
    }
    await service.createLoop(QUIET, { ...once, loop_id: 'orphan' })
    store.dying = true
    await expect(service.runLoop(QUIET, 'orphan', { trigger: 'api' })).rejects.toThrow(
      SimulatedCrash,
    )
    store.dying = false
    await clock.advance(30_000)
    store.loopReads.length = 0
    const swept = await service.fireSchedules()
    expect(swept.started).toEqual([expect.objectContaining({ tenant: QUIET })])
    // Checked among the first of the pass: it was checked after all forty before.
    expect(store.loopReads).toHaveLength(BUSY_LOOPS + 1)
    expect(store.loopReads.indexOf(QUIET)).toBeLessThan(2)
  })
})
