/**
 * Wraps any ObjectStore and counts the requests made through it, for benchmarks and tests.
 * A request counts when it is issued, whether it succeeds or fails. `bytesWritten` is the size
 * of every put body and append sent (failed conditional ones included: the bytes still travel);
 * `bytesRead` is the size of every body returned by `get`.
 */
import type { ObjectStore } from '../../src/ports/object-store.ts'

export interface ObjectStoreCounts {
  get: number
  put: number
  list: number
  delete: number
  /** Appends (only on a store that has them). */
  append: number
  bytesWritten: number
  bytesRead: number
}

export interface CountingObjectStore {
  store: ObjectStore
  /** Live counters; read them at any time. */
  counts: ObjectStoreCounts
  /** Zeroes every counter. */
  reset(): void
  /** A copy of the counters as they are now. */
  snapshot(): ObjectStoreCounts
}

function zeroCounts(): ObjectStoreCounts {
  return { get: 0, put: 0, list: 0, delete: 0, append: 0, bytesWritten: 0, bytesRead: 0 }
}

export function countingObjectStore(inner: ObjectStore): CountingObjectStore {
  const counts = zeroCounts()
  const store: ObjectStore = {
    allocationBytes: inner.allocationBytes,
    async get(key) {
      counts.get++
      const found = await inner.get(key)
      if (found) counts.bytesRead += found.body.length
      return found
    },
    async put(key, body, options) {
      counts.put++
      counts.bytesWritten += body.length
      return inner.put(key, body, options)
    },
    async list(prefix, options) {
      counts.list++
      return inner.list(prefix, options)
    },
    async delete(key) {
      counts.delete++
      return inner.delete(key)
    },
  }
  const append = inner.append?.bind(inner)
  if (append) {
    store.append = async (key, bytes, options) => {
      counts.append++
      counts.bytesWritten += bytes.length
      return append(key, bytes, options)
    }
  }
  return {
    store,
    counts,
    reset() {
      Object.assign(counts, zeroCounts())
    },
    snapshot() {
      return { ...counts }
    },
  }
}
