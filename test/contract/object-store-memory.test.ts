import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { describeObjectStore } from './object-store.suite.ts'
import { describeAppends } from './object-store-append.suite.ts'

describeObjectStore('memory', async () => ({
  store: new MemoryObjectStore(),
  cleanup: async () => {},
}))

describeObjectStore('memory without appends', async () => ({
  store: new MemoryObjectStore({ appendable: false }),
  cleanup: async () => {},
}))

describeObjectStore('counting(memory)', async () => ({
  store: countingObjectStore(new MemoryObjectStore()).store,
  cleanup: async () => {},
}))

describeAppends('memory', async () => ({ store: new MemoryObjectStore(), cleanup: async () => {} }))

describeAppends('counting(memory)', async () => ({
  store: countingObjectStore(new MemoryObjectStore()).store,
  cleanup: async () => {},
}))

describe('MemoryObjectStore specifics', () => {
  it('changes the etag on every write, even of identical bytes', async () => {
    const store = new MemoryObjectStore()
    const body = new TextEncoder().encode('same')
    const first = await store.put('k', body)
    const second = await store.put('k', body)
    expect(second.etag).not.toBe(first.etag)
    await expect(store.put('k', body, { ifMatch: first.etag })).rejects.toMatchObject({
      code: 'conflict',
    })
  })

  it('rejects empty keys, contradictory conditions and bad list options', async () => {
    const store = new MemoryObjectStore()
    await expect(store.get('')).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(
      store.put('k', new Uint8Array(1), { ifNoneMatch: '*', ifMatch: '"x"' }),
    ).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(store.list('', { limit: 0 })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(store.list('', { cursor: 'bogus' })).rejects.toMatchObject({
      code: 'invalid_input',
    })
  })

  it('caps pages at 1000 entries', async () => {
    const store = new MemoryObjectStore()
    for (let i = 0; i < 1005; i++)
      await store.put(`k/${String(i).padStart(5, '0')}`, new Uint8Array(1))
    const page = await store.list('k/', { limit: 5000 })
    expect(page.objects.length).toBe(1000)
    expect(page.cursor).toBeDefined()
    const rest = await store.list('k/', { cursor: page.cursor! })
    expect(rest.objects.map((o) => o.key)).toEqual([
      'k/01000',
      'k/01001',
      'k/01002',
      'k/01003',
      'k/01004',
    ])
  })

  it('orders keys by code point (UTF-8 byte order), not UTF-16 units', async () => {
    const store = new MemoryObjectStore()
    const keys = ['u/\uffff', 'u/\u{1f600}', 'u/z', 'u/\ue000']
    for (const key of keys) await store.put(key, new Uint8Array(0))
    const listed = (await store.list('u/')).objects.map((o) => o.key)
    expect(listed).toEqual(['u/z', 'u/\ue000', 'u/\uffff', 'u/\u{1f600}'])
  })
})

describe('countingObjectStore', () => {
  it('counts requests and bytes, failed ones included', async () => {
    const { store, counts, reset, snapshot } = countingObjectStore(new MemoryObjectStore())
    await store.put('a', new Uint8Array(10))
    await store.put('a', new Uint8Array(4), { ifNoneMatch: '*' }).catch(() => {})
    await store.get('a')
    await store.get('missing')
    await store.list('')
    await store.delete('a')
    await store.append?.('b', new Uint8Array(3), { at: 0, ifSize: 0 })
    await store.append?.('b', new Uint8Array(2), { at: 0, ifSize: 0 }).catch(() => {})
    expect(snapshot()).toEqual({
      get: 2,
      put: 2,
      list: 1,
      delete: 1,
      append: 2,
      bytesWritten: 19,
      bytesRead: 10,
    })
    reset()
    expect(counts).toEqual({
      get: 0,
      put: 0,
      list: 0,
      delete: 0,
      append: 0,
      bytesWritten: 0,
      bytesRead: 0,
    })
  })

  it('has no append over a store without one', () => {
    const { store } = countingObjectStore(new MemoryObjectStore({ appendable: false }))
    expect(store.append).toBeUndefined()
  })
})
