import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { checkStorage } from '../../functions/entries/storage-check.ts'
import type { ObjectStore, PutOptions } from '../../src/ports/object-store.ts'

/** An S3-compatible server that accepts the conditional headers and ignores them. */
function ignoring(header: keyof PutOptions, base = new MemoryObjectStore()): ObjectStore {
  return {
    get: (key) => base.get(key),
    list: (prefix, options) => base.list(prefix, options),
    delete: (key) => base.delete(key),
    put: (key, body, options = {}) => base.put(key, body, { ...options, [header]: undefined }),
  }
}

describe('checkStorage', () => {
  it('passes a store that keeps both conditional-write promises, and leaves nothing behind', async () => {
    const store = new MemoryObjectStore()
    const result = await checkStorage(store, new MemoryCoordinator())
    expect(result.ok).toBe(true)
    expect(result.lines).toHaveLength(7)
    expect(result.lines.every((line) => line.startsWith('ok '))).toBe(true)
    expect((await store.list('')).objects).toEqual([])
  })

  it('fails a store that ignores If-None-Match, saying what that breaks', async () => {
    const result = await checkStorage(ignoring('ifNoneMatch'), new MemoryCoordinator())
    expect(result.ok).toBe(false)
    expect(result.lines.join('\n')).toMatch(
      /FAIL {2}create-only PUT of an existing key is refused .*: the store accepted it: it ignores If-None-Match/,
    )
    // The coordinator is still checked.
    expect(result.lines.at(-1)).toMatch(/^ok {4}coordinator lease/)
  })

  it('fails a store that ignores If-Match', async () => {
    const result = await checkStorage(ignoring('ifMatch'), new MemoryCoordinator())
    expect(result.ok).toBe(false)
    expect(result.lines.join('\n')).toMatch(/FAIL {2}PUT with a stale version is refused/)
  })

  it('fails a store that writes an If-Match PUT of a missing key (older MinIO)', async () => {
    const base = new MemoryObjectStore()
    const lenient: ObjectStore = {
      get: (key) => base.get(key),
      list: (prefix, options) => base.list(prefix, options),
      delete: (key) => base.delete(key),
      put: async (key, body, options = {}) =>
        (await base.get(key)) === null
          ? base.put(key, body, { ...options, ifMatch: undefined })
          : base.put(key, body, options),
    }
    const result = await checkStorage(lenient, new MemoryCoordinator())
    expect(result.ok).toBe(false)
    expect(result.lines.join('\n')).toMatch(/FAIL {2}PUT with If-Match on a missing key is refused/)
    expect((await base.list('')).objects).toEqual([])
  })

  it('fails when the coordinator cannot give a lease', async () => {
    const coordinator = new MemoryCoordinator()
    const result = await checkStorage(new MemoryObjectStore(), coordinator, 'fixed')
    expect(result.ok).toBe(true)
    await coordinator.beginTurn({ sessionId: 'probe-fixed', tenant: '.probe', leaseMs: 60_000 })
    const busy = await checkStorage(new MemoryObjectStore(), coordinator, 'fixed')
    expect(busy.ok).toBe(false)
    expect(busy.lines.at(-1)).toMatch(/^FAIL {2}coordinator lease: expected a lease, got busy/)
  })
})
