import { expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { ENTRY_GRACE_MS } from '../../src/core/background/entry-grace.ts'
import { LoopStore } from '../../src/core/loops/loop-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { SimulatedCrash } from './crashing-object-store.ts'
import { type Hold, heldObjectStore } from './held-object-store.ts'
import { everyMinute, loopInstance } from './loop-instance.ts'
import { testClock } from './test-clock.ts'

/**
 * A pass deletes a loop entry it read past its grace with no run running (no loop) after a new
 * start (creation) wrote the entry anew: the delete is held between the pass's reads and it,
 * and the starter's save lands before the delete (the pass's check after its delete puts the
 * entry back) or after it (the starter's check after its save does). Either way the run is
 * revived after the starter died before recording its first step, the schedule fires. Shared by
 * the memory store's test and S3's (moto), `fresh` giving each case an empty store.
 */
const oneStep = (loopId: string) => ({
  loop_id: loopId,
  task: 'Tidy one file.',
  budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 1 },
})

function deployment(inner: ObjectStore) {
  const held = heldObjectStore(inner)
  const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30))
  const coordinator = new MemoryCoordinator()
  const starting = loopInstance({ store: held.store, clock, coordinator })
  const sweeping = loopInstance({ store: held.store, clock, coordinator })
  const loops = new LoopStore(new SessionStore({ store: held.store }))
  return { held, clock, starting, sweeping, loops }
}

const entryKey = (kind: string, loopId: string) => (key: string) =>
  key.endsWith(`.turnline/${kind}/acme/${loopId}.json`)
const isWork = (key: string) => key.includes('.turnline/work/pending/')

/** The starter held at its save: the pass's delete, and its read after, go first. */
async function passFirst(
  save: Hold,
  drop: Hold,
  pass: Promise<unknown>,
  entries: () => Promise<string[]>,
) {
  await save.reached
  drop.open()
  await pass
  expect(await entries()).toEqual([])
  save.open()
}

export function loopEntryRaces(fresh: () => ObjectStore | Promise<ObjectStore>) {
  for (const last of ['pass', 'starter'] as const) {
    it(`a run entry a pass deletes during a new start is back (${last} checks last), and the run is revived`, async () => {
      const { held, clock, starting, sweeping, loops } = deployment(await fresh())
      const runEntries = async () => (await loops.runEntries()).map((entry) => entry.loopId)
      await starting.createLoop('acme', oneStep('tidy'))
      // A start that died before saving its run left an entry; it is past the grace.
      held.dieAt((key) => key.includes('/state/loop-tidy'))
      await expect(starting.runLoop('acme', 'tidy', { trigger: 'api' })).rejects.toThrow(
        SimulatedCrash,
      )
      await clock.advance(ENTRY_GRACE_MS)

      // The pass read the loop (no run running) and the entry's old time: its delete is held.
      const drop = held.hold('delete', entryKey('loop-runs', 'tidy'))
      const pass = sweeping.fireSchedules()
      await drop.reached
      // A new start writes the entry anew, saves its run and dies before its step's record.
      held.dieAt(isWork)
      const save =
        last === 'starter' ? held.hold('put', (k) => k.includes('/state/loop-tidy')) : undefined
      const started = starting.runLoop('acme', 'tidy', { trigger: 'api' })
      if (save) await passFirst(save, drop, pass, runEntries)
      await expect(started).rejects.toThrow(SimulatedCrash)
      held.dieAt(undefined)
      drop.open()
      await pass
      expect(await runEntries()).toEqual(['tidy'])
      expect(await sweeping.getLoop('acme', 'tidy')).toMatchObject({ run: { state: 'running' } })
      await clock.advance(30_000)
      const swept = await sweeping.fireSchedules()
      expect(swept.started).toEqual([expect.objectContaining({ session_id: 'loop.tidy' })])
    })

    it(`a schedule entry a pass deletes during the loop's creation is back (${last} checks last), and it fires`, async () => {
      const { held, clock, starting, sweeping, loops } = deployment(await fresh())
      const scheduled = () => loops.scheduledLoopIds('acme', 100)
      // A creation that died before the loop's pointer left an entry; it is past the grace.
      held.dieAt((key) => key.includes('.turnline/loops/nightly'))
      await expect(starting.createLoop('acme', everyMinute('nightly'))).rejects.toThrow(
        SimulatedCrash,
      )
      held.dieAt(undefined)
      await clock.advance(ENTRY_GRACE_MS)

      // The pass found no loop and read the entry's old time: its delete is held.
      const drop = held.hold('delete', entryKey('schedules', 'nightly'))
      const pass = sweeping.fireSchedules()
      await drop.reached
      const pointer =
        last === 'starter'
          ? held.hold('put', (k) => k.includes('.turnline/loops/nightly'))
          : undefined
      const created = starting.createLoop('acme', everyMinute('nightly'))
      if (pointer) await passFirst(pointer, drop, pass, scheduled)
      await created
      drop.open()
      await pass
      expect(await scheduled()).toEqual(['nightly'])
      await clock.advance(60_000)
      const swept = await sweeping.fireSchedules()
      expect(swept.started).toEqual([expect.objectContaining({ session_id: 'loop.nightly' })])
    })
  }
}
