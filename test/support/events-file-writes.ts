import type { ObjectStore } from '../../src/ports/object-store.ts'

/**
 * Wraps a store and records what reaches events.jsonl: the size of every whole rewrite (a put)
 * and the bytes appended. The wrapper appends only when the store does.
 */
export function recordingEventsWrites(inner: ObjectStore): {
  store: ObjectStore
  rewrites: number[]
  appended: () => number
} {
  const rewrites: number[] = []
  let appended = 0
  const isEvents = (key: string) => key.endsWith('/events.jsonl')
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: (key, body, options) => {
      if (isEvents(key)) rewrites.push(body.byteLength)
      return inner.put(key, body, options)
    },
  }
  const append = inner.append?.bind(inner)
  if (append) {
    store.append = (key, bytes, options) => {
      if (isEvents(key)) appended += bytes.byteLength
      return append(key, bytes, options)
    }
  }
  return { store, rewrites, appended: () => appended }
}
