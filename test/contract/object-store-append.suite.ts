/**
 * The append capability of the ObjectStore contract (`ObjectStore.append`), run against every
 * adapter that has it (memory, fs). Each test gets a fresh, empty store.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import type { AppendOptions, ObjectStore } from '../../src/ports/object-store.ts'
import { freshStorePerTest, outcome, type StoreFixture } from './object-store.suite.ts'

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const text = (body: Uint8Array | undefined): string => new TextDecoder().decode(body)

export function describeAppends(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`ObjectStore appends: ${name}`, () => {
    const current = freshStorePerTest(makeStore)
    let store: ObjectStore
    beforeEach(() => {
      store = current()
    })
    const append = (key: string, body: string, options: AppendOptions) => {
      if (!store.append) throw new Error(`${name} has no append`)
      return store.append(key, bytes(body), options)
    }

    it('creates at 0, grows in place, and keeps the version until a put replaces the object', async () => {
      const first = await append('s/events.jsonl', 'one\n', { at: 0, ifSize: 0 })
      expect(first.size).toBe(4)
      const second = await append('s/events.jsonl', 'two\n', {
        at: 4,
        ifSize: 4,
        ifVersion: first.version,
      })
      expect(second).toEqual({ size: 8, version: first.version })
      const got = await store.get('s/events.jsonl')
      expect(text(got?.body)).toBe('one\ntwo\n')
      expect(got?.version).toBe(first.version)
      expect((await store.list('s/')).objects).toEqual([{ key: 's/events.jsonl', size: 8 }])
      const put = await store.put('s/events.jsonl', bytes('new\n'))
      expect(put.version).toBeDefined()
      expect(put.version).not.toBe(first.version)
      expect((await store.get('s/events.jsonl'))?.version).toBe(put.version)
    })

    it('refuses another size or version, writing nothing', async () => {
      const { version } = await append('s/log', 'one\n', { at: 0, ifSize: 0 })
      expect(await outcome(append('s/log', 'x\n', { at: 3, ifSize: 3 }))).toBe('conflict')
      expect(await outcome(append('s/log', 'x\n', { at: 4, ifSize: 5 }))).toBe('conflict')
      expect(await outcome(append('s/missing', 'x\n', { at: 2, ifSize: 2 }))).toBe('conflict')
      await store.put('s/other', bytes('abcd'))
      expect(await outcome(append('s/other', 'x', { at: 4, ifSize: 4, ifVersion: version }))).toBe(
        'conflict',
      )
      expect(text((await store.get('s/log'))?.body)).toBe('one\n')
      expect(text((await store.get('s/other'))?.body)).toBe('abcd')
      expect(await store.get('s/missing')).toBeNull()
    })

    it('replaces what follows `at` when the object is longer (a torn tail is cut off)', async () => {
      await append('s/log', 'one\ntw', { at: 0, ifSize: 0 })
      const repaired = await append('s/log', 'two\n', { at: 4, ifSize: 6 })
      expect(repaired.size).toBe(8)
      expect(text((await store.get('s/log'))?.body)).toBe('one\ntwo\n')
      await append('s/log', 'three\nfour-torn', { at: 8, ifSize: 8 })
      const cut = await append('s/log', '', { at: 14, ifSize: 23 })
      expect(cut.size).toBe(14)
      expect(text((await store.get('s/log'))?.body)).toBe('one\ntwo\nthree\n')
    })

    it('appends left unsynced read back like any, and an append of no bytes keeps them', async () => {
      const first = await append('s/log', 'one\n', { at: 0, ifSize: 0, durable: false })
      await append('s/log', 'two\n', { at: 4, ifSize: 4, durable: false })
      const synced = await append('s/log', '', { at: 8, ifSize: 8, ifVersion: first.version })
      expect(synced).toEqual({ size: 8, version: first.version })
      expect(text((await store.get('s/log'))?.body)).toBe('one\ntwo\n')
    })

    it('rejects unusable offsets before any I/O', async () => {
      for (const options of [
        { at: -1, ifSize: 0 },
        { at: 2, ifSize: 1 },
        { at: 0.5, ifSize: 1 },
        { at: 0, ifSize: 0, ifVersion: '' },
      ]) {
        expect(await outcome(append('s/log', 'x', options))).toBe('invalid_input')
      }
      expect(await store.get('s/log')).toBeNull()
    })

    it('leaves the caller’s bytes as they were', async () => {
      const body = bytes('kept\n')
      await store.append?.('s/log', body, { at: 0, ifSize: 0 })
      await store.append?.('s/log', body, { at: 5, ifSize: 5 })
      expect(text(body)).toBe('kept\n')
      expect(text((await store.get('s/log'))?.body)).toBe('kept\nkept\n')
    })

    it('writers racing with the same bytes at the same offset leave those bytes once', async () => {
      await append('s/log', 'head\n', { at: 0, ifSize: 0 })
      const results = await Promise.all(
        Array.from({ length: 8 }, () => outcome(append('s/log', 'next\n', { at: 5, ifSize: 5 }))),
      )
      expect(results).toContain('ok')
      expect(text((await store.get('s/log'))?.body)).toBe('head\nnext\n')
    })
  })
}
