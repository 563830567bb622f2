import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SimulatedCrash } from './crashing-object-store.ts'
import { gate } from './gate.ts'

/** A write or delete held where a test set it: `reached` once the call waits, `open` to let it on. */
export interface Hold {
  reached: Promise<void>
  open: () => void
}

/**
 * Wraps a real store (memory, S3): `hold` stops the next put or delete of a key it matches
 * until the test opens it, `dieAt` fails every put of a key it matches as a writer that died
 * before it (SimulatedCrash), so a test can place one instance's calls between another's.
 */
export function heldObjectStore(inner: ObjectStore) {
  const holds: Array<{
    op: 'put' | 'delete'
    match: (key: string) => boolean
    wait: () => Promise<void>
  }> = []
  let dieAt: ((key: string) => boolean) | undefined
  const pass = async (op: 'put' | 'delete', key: string) => {
    const at = holds.findIndex((hold) => hold.op === op && hold.match(key))
    if (at >= 0) await holds.splice(at, 1)[0]?.wait()
  }
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    async delete(key) {
      await pass('delete', key)
      return inner.delete(key)
    },
    async put(key, body, options) {
      if (dieAt?.(key)) throw new SimulatedCrash(`the instance died before writing ${key}`)
      await pass('put', key)
      return inner.put(key, body, options)
    },
  }
  const append = inner.append?.bind(inner)
  if (append) store.append = append
  return {
    store,
    hold(op: 'put' | 'delete', match: (key: string) => boolean): Hold {
      const reached = gate()
      const release = gate()
      holds.push({
        op,
        match,
        wait: () => {
          reached.open()
          return release.promise
        },
      })
      return { reached: reached.promise, open: release.open }
    },
    dieAt(match: ((key: string) => boolean) | undefined) {
      dieAt = match
    },
  }
}
