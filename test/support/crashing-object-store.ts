import type { ObjectStore } from '../../src/ports/object-store.ts'

/** Thrown by a CrashingObjectStore at its crash point: the writer "dies" there. */
export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash'
}

/**
 * Wraps a real store and kills the writer at its `crashAt`-th write (1-based; puts and appends
 * count, and a store that appends keeps its appends), or at its first write of a key `crashAt`
 * picks: `before` fails the write without storing
 * it, `after` stores it and then fails (the process died before it saw the answer). With
 * `torn`, a crash before an append first writes part of its bytes, as a process killed inside
 * the write would. Every later call fails too, as for a dead process.
 */
export function crashingObjectStore(
  inner: ObjectStore,
  crashAt: number | ((key: string) => boolean),
  mode: 'before' | 'after' | 'torn',
): { store: ObjectStore; crashed: () => boolean } {
  let puts = 0
  let dead = false
  const crashesAt = (n: number, key: string) =>
    typeof crashAt === 'number' ? n === crashAt : crashAt(key)
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
      // This write's number, kept: writes may overlap (an append and the turn index).
      const n = ++puts
      const hit = crashesAt(n, key)
      if (hit && mode !== 'after') {
        dead = true
        throw new SimulatedCrash(`crash before write #${n} (${key})`)
      }
      const result = await inner.put(key, body, options)
      if (hit) {
        dead = true
        throw new SimulatedCrash(`crash after write #${n} (${key})`)
      }
      return result
    },
  }
  const append = inner.append?.bind(inner)
  if (append) {
    store.append = async (key, bytes, options) => {
      guard()
      const n = ++puts
      const hit = crashesAt(n, key)
      if (hit && mode !== 'after') {
        dead = true
        const part = bytes.subarray(0, Math.ceil(bytes.length / 2))
        if (mode === 'torn' && part.length > 0) await append(key, part, options)
        throw new SimulatedCrash(`crash ${mode} append, write #${n} (${key})`)
      }
      const result = await append(key, bytes, options)
      if (hit) {
        dead = true
        throw new SimulatedCrash(`crash after append, write #${n} (${key})`)
      }
      return result
    }
  }
  return { store, crashed: () => dead }
}
