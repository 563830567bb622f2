import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { PASS_BUDGET_PER_TENANT } from '../../src/core/background/pass-budget.ts'
import { everyMinute, loopInstance } from '../support/loop-instance.ts'
import { testClock } from '../support/test-clock.ts'

/**
 * The per-tenant budget of a schedule pass, on the real engine and a memory store: a tenant with
 * two and a half budgets of loops due at one minute gets a budget of them checked per pass, the
 * next pass taking first what the last one left, while another tenant's fire in the first; after
 * three passes every loop fired that minute exactly once — none dropped, none twice — also with
 * two instances passing at once. The runs' revival checks are bounded the same way.
 */
const BUSY = 'a-busy'
const QUIET = 'z-quiet'
const BUSY_LOOPS = 2 * PASS_BUDGET_PER_TENANT + PASS_BUDGET_PER_TENANT / 2
const MINUTE = '2026-01-01T00:01:00.000Z'

/** Counts the reads of the busy tenant's loop pointers. */
class CountingStore extends MemoryObjectStore {
  busyChecks = 0
  override get(key: string) {
    if (key.includes(`${BUSY}/.turnline/loops/`)) this.busyChecks++
    return super.get(key)
  }
}

const busyId = (n: number) => `busy-${String(n).padStart(3, '0')}`

async function deployment() {
  const store = new CountingStore()
  const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30))
  const coordinator = new MemoryCoordinator()
  const first = loopInstance({ store, clock, coordinator })
  for (let n = 0; n < BUSY_LOOPS; n++) await first.createLoop(BUSY, everyMinute(busyId(n)))
  for (const n of [0, 1, 2]) await first.createLoop(QUIET, everyMinute(`quiet-${n}`))
  await clock.advance(60_000)
  return { store, first, second: loopInstance({ store, clock, coordinator }) }
}

const loopsOf = (started: { tenant: string; session_id: string }[], tenant: string) =>
  started.filter((at) => at.tenant === tenant).map((at) => at.session_id.replace(/^loop\./, ''))

describe('a schedule pass with a budget per tenant', () => {
  it("checks a budget of a tenant's schedules per pass, the rest first at the next, and fires each due minute once", async () => {
    const { store, first } = await deployment()
    const ids = [...Array(BUSY_LOOPS).keys()].map(busyId)

    store.busyChecks = 0
    const one = await first.fireSchedules()
    // A firing reads its loop twice (the check, the run's start), a revival check once: a
    // budget of each, not all 250 of each (750 reads).
    expect(store.busyChecks).toBeLessThanOrEqual(3 * PASS_BUDGET_PER_TENANT)
    expect(loopsOf(one.started, QUIET).sort()).toEqual(['quiet-0', 'quiet-1', 'quiet-2'])
    expect(loopsOf(one.started, BUSY).sort()).toEqual(ids.slice(0, PASS_BUDGET_PER_TENANT))

    store.busyChecks = 0
    const two = await first.fireSchedules()
    expect(store.busyChecks).toBeLessThanOrEqual(3 * PASS_BUDGET_PER_TENANT)
    expect(loopsOf(two.started, QUIET)).toEqual([])
    expect(loopsOf(two.started, BUSY).sort()).toEqual(
      ids.slice(PASS_BUDGET_PER_TENANT, 2 * PASS_BUDGET_PER_TENANT),
    )

    // The last half budget, then round to the first ones: fired already this minute, no run.
    const three = await first.fireSchedules()
    expect(loopsOf(three.started, BUSY).sort()).toEqual(ids.slice(2 * PASS_BUDGET_PER_TENANT))
    expect(three.skipped).toBe(0)
    expect((await first.fireSchedules()).started).toEqual([])

    const runs = [...one.started, ...two.started, ...three.started]
    expect(new Set(runs.map((at) => `${at.session_id}/${at.work_id}`)).size).toBe(BUSY_LOOPS + 3)
    expect((await first.listWork(undefined)).items).toHaveLength(BUSY_LOOPS + 3)
    for (const loopId of [ids[0], ids[PASS_BUDGET_PER_TENANT], ids.at(-1)]) {
      expect(await first.getLoop(BUSY, loopId ?? '')).toMatchObject({
        schedule: { last_slot: MINUTE },
        run: { trigger: 'schedule', state: 'running' },
      })
    }
  })

  it('takes the same budget on two instances passing at once: each due loop starts one run', async () => {
    const { first, second } = await deployment()
    const [a, b] = await Promise.all([first.fireSchedules(), second.fireSchedules()])
    const runs = new Set(
      [...a.started, ...b.started].map((at) => `${at.tenant}/${at.session_id}/${at.work_id}`),
    )
    expect(runs.size).toBe(PASS_BUDGET_PER_TENANT + 3)
    const next = await first.fireSchedules()
    expect(loopsOf(next.started, BUSY)).toHaveLength(PASS_BUDGET_PER_TENANT)
  })
})
