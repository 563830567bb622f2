import type { ObjectStore } from '../../src/ports/object-store.ts'

/** Thrown by a CrashingObjectStore at its crash point: the writer "dies" there. */
export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash'
}

/**
 * Wraps a real store and kills the writer at its `crashAt`-th put (1-based): `before` fails the
 * put without storing it, `after` stores it and then fails (the process died before it saw
 * the answer). Every later call fails too, as for a dead process.
 */
export function crashingObjectStore(
  inner: ObjectStore,
  crashAt: number,
  mode: 'before' | 'after',
): { store: ObjectStore; crashed: () => boolean } {
  let puts = 0
  let dead = false
  const guard = () => {
    if (dead) throw new SimulatedCrash('writer is dead')
  }
  const store: ObjectStore = {
    async get(key) {
      guard()
      return inner.get(key)
    },
    async list(prefix, options) {
      guard()
      return inner.list(prefix, options)
    },
    async delete(key) {
      guard()
      return inner.delete(key)
    },
    async put(key, body, options) {
      guard()
      puts += 1
      if (puts === crashAt && mode === 'before') {
        dead = true
        throw new SimulatedCrash(`crash before put #${puts} (${key})`)
      }
      const result = await inner.put(key, body, options)
      if (puts === crashAt) {
        dead = true
        throw new SimulatedCrash(`crash after put #${puts} (${key})`)
      }
      return result
    },
  }
  return { store, crashed: () => dead }
}
