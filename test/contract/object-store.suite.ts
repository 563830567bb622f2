/**
 * The ObjectStore contract, run against every adapter. Each test gets a fresh, empty store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'

export interface StoreFixture {
  store: ObjectStore
  cleanup: () => Promise<void>
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const bytes = (text: string): Uint8Array => encoder.encode(text)
const text = (body: Uint8Array): string => decoder.decode(body)

/** The error code a promise rejects with, or 'ok'. */
export async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    if (isTurnlineError(error)) return error.code
    throw error
  }
}

function tally(outcomes: string[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const item of outcomes) counts[item] = (counts[item] ?? 0) + 1
  return counts
}

/** Keys chosen so that byte order differs from naive "folder first" order. */
const LISTING_KEYS = ['a-b', 'a.b', 'a/b', 'a/c/d', 'a/c/e', 'a0', 'b', 'b0/x/y', 'c']

/** Inside a describe: a fresh store for every test, cleaned up after it; returns its getter. */
export function freshStorePerTest(makeStore: () => Promise<StoreFixture>): () => ObjectStore {
  let fixture: StoreFixture | undefined
  beforeEach(async () => {
    fixture = await makeStore()
  })
  afterEach(async () => {
    await fixture?.cleanup()
    fixture = undefined
  })
  return () => {
    if (!fixture) throw new Error('no store outside a test')
    return fixture.store
  }
}

export function describeObjectStore(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`ObjectStore contract: ${name}`, () => {
    const current = freshStorePerTest(makeStore)
    let store: ObjectStore
    beforeEach(() => {
      store = current()
    })

    async function putAll(keys: string[]): Promise<void> {
      const shuffled = [...keys].sort(() => Math.random() - 0.5)
      for (const key of shuffled) await store.put(key, bytes(`body of ${key}`))
    }

    it('returns null for a missing key', async () => {
      expect(await store.get('missing/key.json')).toBeNull()
    })

    it('round-trips bytes exactly, including every byte value and an empty body', async () => {
      const all = new Uint8Array(256 * 4).map((_, i) => i % 256)
      const { etag } = await store.put('bin/all-bytes', all, { contentType: 'application/x' })
      expect(typeof etag).toBe('string')
      expect(etag.length).toBeGreaterThan(0)
      const got = await store.get('bin/all-bytes')
      expect(got?.etag).toBe(etag)
      expect(got?.body).toBeInstanceOf(Uint8Array)
      expect(Array.from(got?.body ?? [])).toEqual(Array.from(all))

      await store.put('bin/empty', new Uint8Array(0))
      expect((await store.get('bin/empty'))?.body.length).toBe(0)

      const unicode = 'héllo ✓ 𝄞\n{"a":1}'
      await store.put('bin/unicode.json', bytes(unicode))
      expect(text((await store.get('bin/unicode.json'))!.body)).toBe(unicode)
    })

    it('copies bodies in and out', async () => {
      const body = bytes('original')
      await store.put('copy/k', body)
      body.fill(0)
      const first = await store.get('copy/k')
      first!.body.fill(0)
      expect(text((await store.get('copy/k'))!.body)).toBe('original')
    })

    it('overwrites unconditionally and changes the etag when the content changes', async () => {
      const one = await store.put('over/k', bytes('one'))
      const two = await store.put('over/k', bytes('two'))
      expect(two.etag).not.toBe(one.etag)
      const got = await store.get('over/k')
      expect(text(got!.body)).toBe('two')
      expect(got!.etag).toBe(two.etag)
    })

    it('create-only succeeds on a missing key and conflicts on an existing one', async () => {
      const created = await store.put('log/0000000001.json', bytes('first'), { ifNoneMatch: '*' })
      const second = store.put('log/0000000001.json', bytes('second'), { ifNoneMatch: '*' })
      await expect(second).rejects.toMatchObject({ name: 'TurnlineError', code: 'conflict' })
      const got = await store.get('log/0000000001.json')
      expect(text(got!.body)).toBe('first')
      expect(got!.etag).toBe(created.etag)
    })

    it('ifMatch replaces only the current version', async () => {
      const v1 = await store.put('manifest.json', bytes('v1'))
      const v2 = await store.put('manifest.json', bytes('v2'), { ifMatch: v1.etag })
      expect(v2.etag).not.toBe(v1.etag)
      expect(text((await store.get('manifest.json'))!.body)).toBe('v2')

      const stale = store.put('manifest.json', bytes('v3'), { ifMatch: v1.etag })
      await expect(stale).rejects.toMatchObject({ code: 'conflict', retryable: true })
      const got = await store.get('manifest.json')
      expect(text(got!.body)).toBe('v2')
      expect(got!.etag).toBe(v2.etag)

      const missing = store.put('nothing-here.json', bytes('x'), { ifMatch: v2.etag })
      await expect(missing).rejects.toMatchObject({ code: 'not_found' })
      expect(await store.get('nothing-here.json')).toBeNull()
    })

    it('lists keys in byte order with sizes, filtered by prefix', async () => {
      await putAll(LISTING_KEYS)
      const page = await store.list('')
      expect(page.objects.map((o) => o.key)).toEqual(LISTING_KEYS)
      expect(page.objects[0]).toEqual({ key: 'a-b', size: bytes('body of a-b').length })
      expect(page.prefixes).toEqual([])
      expect(page.cursor).toBeUndefined()

      expect((await store.list('a/')).objects.map((o) => o.key)).toEqual(['a/b', 'a/c/d', 'a/c/e'])
      expect((await store.list('a')).objects.map((o) => o.key)).toEqual(LISTING_KEYS.slice(0, 6))
      expect((await store.list('b0/x/')).objects.map((o) => o.key)).toEqual(['b0/x/y'])
      expect((await store.list('zzz/')).objects).toEqual([])
      expect((await store.list('a/c/d')).objects.map((o) => o.key)).toEqual(['a/c/d'])
    })

    it('pages with limit and cursor until the cursor disappears', async () => {
      await putAll(LISTING_KEYS)
      const seen: string[] = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = await store.list('', { limit: 4, ...(cursor ? { cursor } : {}) })
        expect(page.objects.length).toBeLessThanOrEqual(4)
        seen.push(...page.objects.map((o) => o.key))
        cursor = page.cursor
        pages++
      } while (cursor)
      expect(seen).toEqual(LISTING_KEYS)
      expect(pages).toBe(3)
      expect((await listAll(store, 'a', { limit: 2 })).objects.map((o) => o.key)).toEqual(
        LISTING_KEYS.slice(0, 6),
      )
    })

    it('starts after a given key, present or not', async () => {
      await putAll(LISTING_KEYS)
      const listAfter = async (startAfter: string, prefix = '') =>
        (await store.list(prefix, { startAfter })).objects.map((o) => o.key)
      expect(await listAfter('a0')).toEqual(['b', 'b0/x/y', 'c'])
      expect(await listAfter('a/bz')).toEqual(['a/c/d', 'a/c/e', 'a0', 'b', 'b0/x/y', 'c'])
      expect(await listAfter('a/', 'a/')).toEqual(['a/b', 'a/c/d', 'a/c/e'])
      expect(await listAfter('c')).toEqual([])
      const paged = await listAll(store, '', { startAfter: 'a/b', limit: 2 })
      expect(paged.objects.map((o) => o.key)).toEqual(LISTING_KEYS.slice(3))
    })

    it('folds keys below the delimiter into prefixes', async () => {
      await putAll(LISTING_KEYS)
      const top = await store.list('', { delimiter: '/' })
      expect(top.objects.map((o) => o.key)).toEqual(['a-b', 'a.b', 'a0', 'b', 'c'])
      expect(top.prefixes).toEqual(['a/', 'b0/'])

      const inA = await store.list('a/', { delimiter: '/' })
      expect(inA.objects.map((o) => o.key)).toEqual(['a/b'])
      expect(inA.prefixes).toEqual(['a/c/'])

      const partial = await store.list('a/c', { delimiter: '/' })
      expect(partial.objects).toEqual([])
      expect(partial.prefixes).toEqual(['a/c/'])

      const entries: string[] = []
      let cursor: string | undefined
      do {
        const page = await store.list('', {
          delimiter: '/',
          limit: 1,
          ...(cursor ? { cursor } : {}),
        })
        expect(page.objects.length + page.prefixes.length).toBe(1)
        entries.push(...page.objects.map((o) => o.key), ...page.prefixes)
        cursor = page.cursor
      } while (cursor)
      expect(entries).toEqual(['a-b', 'a.b', 'a/', 'a0', 'b', 'b0/', 'c'])

      // (startAfter inside a folded prefix is left unspecified: moto drops that prefix.)
      const late = await store.list('', { delimiter: '/', startAfter: 'a0' })
      expect(late.prefixes).toEqual(['b0/'])
      expect(late.objects.map((o) => o.key)).toEqual(['b', 'c'])
    })

    it('deletes idempotently', async () => {
      await store.delete('never/existed')
      await store.put('del/k', bytes('x'))
      await store.put('del/other', bytes('y'))
      await store.delete('del/k')
      expect(await store.get('del/k')).toBeNull()
      await store.delete('del/k')
      expect((await store.list('del/')).objects.map((o) => o.key)).toEqual(['del/other'])
      await store.put('del/k', bytes('again'), { ifNoneMatch: '*' })
      expect(text((await store.get('del/k'))!.body)).toBe('again')
    })

    it('lets exactly one of 20 racing create-only writers win', async () => {
      const key = 'race/log/0000000007.json'
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          outcome(store.put(key, bytes(`writer ${i}`), { ifNoneMatch: '*' })),
        ),
      )
      expect(tally(results)).toEqual({ ok: 1, conflict: 19 })
      const winner = results.indexOf('ok')
      expect(text((await store.get(key))!.body)).toBe(`writer ${winner}`)
    })

    it('lets exactly one of 20 racing compare-and-swap writers win', async () => {
      const key = 'race/manifest.json'
      const { etag } = await store.put(key, bytes('base'))
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          outcome(store.put(key, bytes(`update ${i}`), { ifMatch: etag })),
        ),
      )
      expect(tally(results)).toEqual({ ok: 1, conflict: 19 })
      const winner = results.indexOf('ok')
      expect(text((await store.get(key))!.body)).toBe(`update ${winner}`)
    })
  })
}
