import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import {
  parseTurnIndex,
  salvageTurnIndex,
  serializeTurnIndex,
  serializeTurnIndexAppend,
  TURN_INDEX_TAIL,
  type TurnIndexEntry,
} from '../../src/contract/turn-index.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { countingKeyWrites } from '../support/key-write-bytes.ts'
import { threadStarted, turnEvents } from '../support/sample-events.ts'
import { expectFilesMatch } from '../support/session-files.ts'

const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }
const encode = (text: string) => new TextEncoder().encode(text)

/** Bytes written to index/turns.json, by puts and appends. */
const countingIndexWrites = (inner: ObjectStore) =>
  countingKeyWrites(inner, (key) => key.endsWith('/index/turns.json'))

const entry = (n: number): TurnIndexEntry => ({
  turn_number: n,
  start_offset: n * 100,
  end_offset: n * 100 + 99,
  event_count: 3,
  ts: '2026-12-05T06:00:00.000Z',
})

describe('index/turns.json on a store that appends', () => {
  it('an appended entry makes exactly the text of the whole index', () => {
    const entries = [1, 2, 3].map(entry)
    let text = serializeTurnIndex({ entries: [] })
    for (let n = 0; n < entries.length; n++) {
      text = text.slice(0, -TURN_INDEX_TAIL.length) + serializeTurnIndexAppend(n, [entries[n]!])
      expect(text).toBe(serializeTurnIndex({ entries: entries.slice(0, n + 1) }))
    }
    const two = serializeTurnIndex({ entries: entries.slice(0, 2) })
    expect(text.slice(0, -TURN_INDEX_TAIL.length) + serializeTurnIndexAppend(3, [])).toBe(text)
    expect(
      two.slice(0, -TURN_INDEX_TAIL.length) + serializeTurnIndexAppend(2, entries.slice(2)),
    ).toBe(text)
  })

  it('a torn append keeps its whole entries; a damaged index is not salvaged', () => {
    const whole = serializeTurnIndex({ entries: [1, 2].map(entry) })
    const appended =
      whole.slice(0, -TURN_INDEX_TAIL.length) + serializeTurnIndexAppend(2, [entry(3)])
    const added = serializeTurnIndexAppend(2, [entry(3)]).length - TURN_INDEX_TAIL.length
    for (const cut of [1, 5, 20, added - 1]) {
      const torn = appended.slice(0, whole.length - TURN_INDEX_TAIL.length + cut)
      expect(() => parseTurnIndex(torn)).toThrow()
      const salvaged = salvageTurnIndex(encode(torn))
      expect(
        salvaged?.entries.map((e) => e.turn_number),
        torn,
      ).toEqual([1, 2])
    }
    expect(salvageTurnIndex(encode('{"entries":['))?.entries).toEqual([])
    expect(salvageTurnIndex(encode('garbage'))).toBeUndefined()
  })

  it('writes the same bytes for turn 2’s entry as for turn 80’s: the index is appended, not rewritten', async () => {
    const counting = countingIndexWrites(new MemoryObjectStore())
    const sessions = new SessionStore({ store: counting.store })
    const committed: ThreadEvent[] = [threadStarted('thread-1')]
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const perTurn: number[] = []
    for (let n = 1; n <= 80; n++) {
      const events = turnEvents(n)
      await sessions.commit(await sessions.open(ref), { events })
      committed.push(...events)
      perTurn.push(counting.take())
    }
    await expectFilesMatch(counting.store, ref.sessionId, committed)
    const early = perTurn.slice(1, 10)
    const late = perTurn.slice(70, 80)
    expect(Math.min(...early)).toBeGreaterThan(0)
    // the entry's offsets gain digits as the file grows: a few bytes, never the whole index
    expect(Math.max(...late)).toBeLessThanOrEqual(Math.min(...early) + 8)
    // and the file is byte for byte what a whole write makes
    const stored = await counting.store.get(sessions.keys(ref).turnIndex)
    const text = new TextDecoder().decode(stored?.body)
    expect(serializeTurnIndex(parseTurnIndex(text))).toBe(text)
  })

  it('a crash inside the index append: the next writer keeps the turn numbers and times it had', async () => {
    const inner = new MemoryObjectStore()
    const appendTo = inner.append?.bind(inner)
    if (!appendTo) throw new Error('the memory store appends')
    let tear = false
    let dead = false
    const alive = async () => {
      if (dead) throw new Error('the writer is dead')
    }
    // The writer dies inside its next append to the index: half the bytes reach the object, and
    // every later call of that process fails.
    const store: ObjectStore = {
      get: (key) => alive().then(() => inner.get(key)),
      list: (prefix, options) => alive().then(() => inner.list(prefix, options)),
      delete: (key) => alive().then(() => inner.delete(key)),
      put: (key, body, options) => alive().then(() => inner.put(key, body, options)),
      append: async (key, bytes, options) => {
        await alive()
        if (!tear || !key.endsWith('/index/turns.json')) return appendTo(key, bytes, options)
        dead = true
        await appendTo(key, bytes.subarray(0, bytes.length >> 1), options)
        throw new Error(`crash inside the append to ${key}`)
      },
    }
    const options = { maxRetainedEvents: 30 }
    const sessions = new SessionStore({ store, ...options })
    const committed: ThreadEvent[] = [threadStarted('thread-1')]
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    for (let n = 1; n <= 11; n++) {
      tear = n === 11
      const events = turnEvents(n)
      const result = await sessions.commit(await sessions.open(ref), { events })
      committed.push(...events)
      if (tear) expect(String(result.maintenanceError)).toContain('crash inside the append')
      else expect(result.maintenanceError).toBeUndefined()
    }
    const keys = sessions.keys(ref)
    const torn = (await inner.get(keys.turnIndex))?.body ?? new Uint8Array(0)
    expect(() => parseTurnIndex(torn)).toThrow()
    const before = salvageTurnIndex(torn)
    expect(before?.entries[0]?.turn_number).toBeGreaterThan(1) // old turns were cut
    expect(before?.entries.at(-1)?.turn_number).toBe(10)
    // the next writer, a fresh process, reads the file and the index and rewrites the index
    const next = new SessionStore({ store: inner, ...options })
    const last = turnEvents(12)
    await next.commit(await next.open(ref), { events: last })
    committed.push(...last)
    await expectFilesMatch(inner, ref.sessionId, committed)
    const after = parseTurnIndex((await inner.get(keys.turnIndex))?.body ?? new Uint8Array(0))
    expect(after.entries.slice(0, before?.entries.length)).toEqual(before?.entries)
    expect(after.entries.at(-1)?.turn_number).toBe(12)
  })
})
