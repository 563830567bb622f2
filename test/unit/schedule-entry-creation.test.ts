import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { ENTRY_GRACE_MS } from '../../src/core/background/entry-grace.ts'
import { LoopStore } from '../../src/core/loops/loop-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { gate } from '../support/gate.ts'
import { everyMinute, loopInstance } from '../support/loop-instance.ts'
import { testClock } from '../support/test-clock.ts'
import { until } from '../support/until.ts'

/**
 * A loop is created after its schedule entry, so a schedule pass between the two finds an entry
 * without its loop: it must leave it (else the loop never fires, and its place under
 * TURNLINE_MAX_SCHEDULED_LOOPS is counted free), while an entry a creation that died left is
 * still dropped once it is older than ENTRY_GRACE_MS.
 */
class HeldPointer extends MemoryObjectStore {
  held: Promise<void> | undefined
  pointerWrites = 0
  override async put(...args: Parameters<MemoryObjectStore['put']>) {
    const [key] = args
    if (key.includes('.turnline/loops/') && this.held) {
      this.pointerWrites += 1
      await this.held
    }
    return super.put(...args)
  }
}

describe('a schedule pass during a loop creation', () => {
  it('keeps the entry of a loop being created, and drops one a dead creation left past the grace', async () => {
    const store = new HeldPointer()
    const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30))
    const coordinator = new MemoryCoordinator()
    const creating = loopInstance({ store, clock, coordinator })
    const sweeping = loopInstance({ store, clock, coordinator })
    const loops = new LoopStore(new SessionStore({ store }))
    const scheduled = () => loops.scheduledLoopIds('acme', 100)

    const pointer = gate()
    store.held = pointer.promise
    const created = creating.createLoop('acme', everyMinute('nightly'))
    await until('the loop pointer being written', () => store.pointerWrites || undefined)
    await sweeping.fireSchedules()
    expect(await scheduled()).toEqual(['nightly'])
    pointer.open()
    store.held = undefined
    await created
    await clock.advance(60_000)
    expect((await sweeping.fireSchedules()).started).toHaveLength(1)

    // A creation that died after its entry: the entry goes once it is older than the grace.
    const dying = gate()
    store.held = dying.promise
    void creating.createLoop('acme', everyMinute('orphan')).catch(() => undefined)
    await until('the orphan pointer being written', () => store.pointerWrites > 1 || undefined)
    await sweeping.fireSchedules()
    expect(await scheduled()).toEqual(['nightly', 'orphan'])
    await clock.advance(ENTRY_GRACE_MS)
    await sweeping.fireSchedules()
    expect(await scheduled()).toEqual(['nightly'])
  })
})
