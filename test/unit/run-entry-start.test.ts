import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { ENTRY_GRACE_MS } from '../../src/core/background/entry-grace.ts'
import { LoopStore } from '../../src/core/loops/loop-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { SimulatedCrash } from '../support/crashing-object-store.ts'
import { gate } from '../support/gate.ts'
import { loopInstance } from '../support/loop-instance.ts'
import { testClock } from '../support/test-clock.ts'
import { until } from '../support/until.ts'

/**
 * A run's entry is written before the run is saved, so a revival pass between the two finds the
 * entry and no running run: it must leave it (else an instance that dies before recording the
 * run's first step leaves a run nothing revives), while an entry a start that died before saving
 * its run left is still dropped once it is older than ENTRY_GRACE_MS.
 */
class HeldSave extends MemoryObjectStore {
  held: Promise<void> | undefined
  stateWrites = 0
  /** A starting instance "dies" at its first write of a work record, or of a loop state. */
  dieAt: 'work' | 'state' | undefined
  override async put(...args: Parameters<MemoryObjectStore['put']>) {
    const [key] = args
    const isState = key.includes('/state/loop-')
    if (this.dieAt === 'work' && key.includes('.turnline/work/pending/')) {
      throw new SimulatedCrash('the instance died')
    }
    if (this.dieAt === 'state' && isState) throw new SimulatedCrash('the instance died')
    if (isState && this.held) {
      this.stateWrites += 1
      await this.held
    }
    return super.put(...args)
  }
}

const oneStep = (loopId: string) => ({
  loop_id: loopId,
  task: 'Tidy one file.',
  budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 1 },
})

describe('a revival pass during a run start', () => {
  it('keeps the entry of a run being saved and revives it, and drops one a dead start left past the grace', async () => {
    const store = new HeldSave()
    const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30))
    const coordinator = new MemoryCoordinator()
    const starting = loopInstance({ store, clock, coordinator })
    const sweeping = loopInstance({ store, clock, coordinator })
    const loops = new LoopStore(new SessionStore({ store }))
    const entries = async () => (await loops.runEntries()).map((entry) => entry.loopId)
    await starting.createLoop('acme', oneStep('tidy'))
    await starting.createLoop('acme', oneStep('orphan'))

    // The run's save is held while another instance's pass runs; the starter then dies before
    // recording the run's first step. The pass leaves the entry, and a later one revives the run.
    const startHeldAndDie = async (loopId: string) => {
      const save = gate()
      store.held = save.promise
      store.dieAt = 'work'
      const writes = store.stateWrites
      const started = starting.runLoop('acme', loopId, { trigger: 'api' })
      await until('the run being saved', () => store.stateWrites > writes || undefined)
      expect((await sweeping.fireSchedules()).started).toEqual([])
      expect(await entries()).toContain(loopId)
      save.open()
      store.held = undefined
      await expect(started).rejects.toThrow(SimulatedCrash)
      store.dieAt = undefined
      expect(await sweeping.getLoop('acme', loopId)).toMatchObject({ run: { state: 'running' } })
      await clock.advance(30_000)
      const swept = await sweeping.fireSchedules()
      expect(swept.started).toEqual([expect.objectContaining({ session_id: `loop.${loopId}` })])
    }
    await startHeldAndDie('tidy')
    expect((await sweeping.listWork()).items).toHaveLength(1)

    // A start that died before saving its run: the entry goes once it is older than the grace.
    store.dieAt = 'state'
    await expect(starting.runLoop('acme', 'orphan', { trigger: 'api' })).rejects.toThrow(
      SimulatedCrash,
    )
    store.dieAt = undefined
    await sweeping.fireSchedules()
    expect(await entries()).toEqual(['orphan', 'tidy'])
    await clock.advance(ENTRY_GRACE_MS)
    await sweeping.fireSchedules()
    expect(await entries()).toEqual(['tidy'])

    // An entry a dead start left, past the grace and not swept yet, when the loop's next run
    // starts: the entry is rewritten with the new start, so the pass meeting it leaves it too.
    store.dieAt = 'state'
    await expect(starting.runLoop('acme', 'orphan', { trigger: 'api' })).rejects.toThrow(
      SimulatedCrash,
    )
    await clock.advance(ENTRY_GRACE_MS)
    await startHeldAndDie('orphan')
    expect(await entries()).toEqual(['orphan', 'tidy'])
  })
})
