import type { ObjectStore } from '../../src/ports/object-store.ts'

/**
 * Wraps a store and counts the bytes written (put or appended) to the keys `counts` picks; the
 * wrapper appends only when the store does. `take` answers the count and starts it again.
 */
export function countingKeyWrites(
  inner: ObjectStore,
  counts: (key: string) => boolean,
): { store: ObjectStore; take: () => number } {
  let bytes = 0
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: (key, body, options) => {
      if (counts(key)) bytes += body.byteLength
      return inner.put(key, body, options)
    },
  }
  const append = inner.append?.bind(inner)
  if (append) {
    store.append = (key, body, options) => {
      if (counts(key)) bytes += body.byteLength
      return append(key, body, options)
    }
  }
  const take = () => {
    const taken = bytes
    bytes = 0
    return taken
  }
  return { store, take }
}
