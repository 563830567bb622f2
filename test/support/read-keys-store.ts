import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'

/** `inner` with the key of every `get` made through it kept in `reads`, in order. */
export function readKeysStore(inner: ObjectStore): { store: ObjectStore; reads: string[] } {
  const { store } = countingObjectStore(inner)
  const reads: string[] = []
  return {
    store: {
      ...store,
      get: (key) => {
        reads.push(key)
        return store.get(key)
      },
    },
    reads,
  }
}
