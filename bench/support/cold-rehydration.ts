import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionLocator } from '../../src/store/session-locator.ts'
import { median } from '../../test/support/long-session.ts'
import { startScriptedEngine } from '../../test/support/scripted-engine.ts'

/** What rehydrating a session cost a cold engine. */
export interface Rehydration {
  /** After this many turns. */
  turn: number
  /** Median over the repeats (ms). */
  ms: number
  /** Object requests (gets and lists) of one rehydration. */
  objects: number
  /** Bytes read by one rehydration. */
  bytes: number
}

/**
 * The time a cold engine takes to rehydrate the session — find its folder (the session pointer)
 * and open it (manifest, the latest checkpoint, the batches after it): what a turn reads before
 * it can run in a process that never saw the session — and the objects and bytes it reads. Each
 * repeat is a new engine on `fresh()` (a new store adapter: nothing cached from the session's
 * turns or an earlier repeat); the median time of `repeats`, after one untimed.
 */
export async function coldRehydration(
  fresh: () => ObjectStore,
  sessionId: string,
  turn: number,
  repeats = 15,
  tenant = 't1',
): Promise<Rehydration> {
  const times: number[] = []
  let objects = 0
  let bytes = 0
  // One more, untimed, first: the process's code for reading a session is compiled by then at
  // every stage alike (a cold engine, not a cold JIT).
  for (let i = -1; i < repeats; i++) {
    const counted = countingObjectStore(fresh())
    const { deps } = startScriptedEngine({
      store: counted.store,
      coordinator: new MemoryCoordinator(),
    })
    const locator = new SessionLocator(deps.sessions.objects, '')
    const started = performance.now()
    const snapshot = await deps.sessions.open(await locator.locate(tenant, sessionId))
    if (i >= 0) times.push(performance.now() - started)
    if (snapshot.history.length === 0) throw new Error('rehydrated an empty transcript')
    const counts = counted.snapshot()
    objects = counts.get + counts.list
    bytes = counts.bytesRead
  }
  return { turn, ms: median(times), objects, bytes }
}
