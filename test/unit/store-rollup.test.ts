import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseVersionedLine, serializeVersionedLine } from '../../src/contract/serialize.ts'
import { parseTurnIndex } from '../../src/contract/turn-index.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { toBytes } from '../../src/store/json-bytes.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { commitTurns } from '../support/commit-turns.ts'
import { recordingEventsWrites } from '../support/events-file-writes.ts'
import { threadCompleted, threadStarted } from '../support/sample-events.ts'

const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }
const decode = (b: Uint8Array | undefined) => new TextDecoder().decode(b)

const grow = (sessions: SessionStore, turns: number, from = 1) =>
  commitTurns(sessions, ref, from, turns)

describe('events.jsonl rollup', () => {
  it('on a store that appends, never rewrites events.jsonl below the cap: bytes written = the file', async () => {
    const inner = new MemoryObjectStore()
    const { store, rewrites, appended } = recordingEventsWrites(inner)
    const sessions = new SessionStore({ store })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    await grow(sessions, 300)
    await sessions.commit(await sessions.open(ref), { events: [threadCompleted('thread-1', 300)] })
    const final = (await inner.get(sessions.keys(ref).events))!.body.byteLength
    expect(rewrites).toEqual([])
    expect(appended()).toBe(final)
    const manifest = await sessions.manifest(ref)
    expect(manifest.rolled_through).toBe(1 + 300 * 5 + 1)
    expect(manifest.events_bytes).toBe(final)
  })

  it('without appends, writes each line about once, in parts, past the cap too', async () => {
    const inner = new MemoryObjectStore({ appendable: false })
    let partBytes = 0
    const store: ObjectStore = {
      get: (key) => inner.get(key),
      list: (prefix, options) => inner.list(prefix, options),
      delete: (key) => inner.delete(key),
      put: (key, body, options) => {
        if (key.includes('/events/')) partBytes += body.byteLength
        return inner.put(key, body, options)
      },
    }
    const sessions = new SessionStore({ store, maxRetainedEvents: 100, checkpointEvery: 4 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    await grow(sessions, 120)
    await sessions.commit(await sessions.open(ref), { events: [threadCompleted('thread-1', 120)] })
    const { events } = await sessions.readEvents(ref, 0, 100_000)
    const lines = events.map((e) => serializeVersionedLine(e.line.event))
    const bytes = lines.reduce((sum, line) => sum + toBytes(`${line}\n`).length, 0)
    // Rewriting the retained events at each rollup wrote 6× this; a part smaller than the next
    // one is joined with it (written twice), here only the creation's single line.
    expect(partBytes).toBeGreaterThanOrEqual(bytes)
    expect(partBytes).toBeLessThan(1.05 * bytes)
    expect((await sessions.manifest(ref)).event_count).toBeLessThanOrEqual(100)
  })

  it('keeps at most the cap in events.jsonl, cutting whole old turns, and rebases the index', async () => {
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ store, maxRetainedEvents: 40 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const events = [threadStarted('thread-1'), ...(await grow(sessions, 30))]
    const done = threadCompleted('thread-1', 30)
    await sessions.commit(await sessions.open(ref), { events: [done] })
    events.push(done)

    const keys = sessions.keys(ref)
    const text = decode((await store.get(keys.events))?.body)
    const lines = text.trimEnd().split('\n')
    expect(lines.length).toBeLessThanOrEqual(40)
    expect(parseVersionedLine(lines[0]!).event).toEqual({ type: 'turn.started' })
    const manifest = await sessions.manifest(ref)
    expect(manifest.event_count).toBe(lines.length)
    expect(manifest.rolled_head_seq).toBe(events.length - lines.length)
    expect(lines.map((l) => parseVersionedLine(l).event)).toEqual(
      events.slice(manifest.rolled_head_seq),
    )

    const index = parseTurnIndex((await store.get(keys.turnIndex))!.body)
    const bytes = new TextEncoder().encode(text)
    for (const entry of index.entries) {
      const slice = decode(bytes.slice(entry.start_offset, entry.end_offset)).trimEnd().split('\n')
      expect(slice).toHaveLength(entry.event_count)
      expect(parseVersionedLine(slice[0]!).event.type).toBe('turn.started')
      expect(parseVersionedLine(slice[slice.length - 1]!).event.type).toBe('turn.completed')
    }
    expect(index.entries[index.entries.length - 1]?.turn_number).toBe(30)
    // the cut part is still readable from the batches
    const page = await sessions.readEvents(ref, 0, 10)
    expect(page.events.map((e) => e.line.event)).toEqual(events.slice(0, 10))
  })

  it('serves reads from batches while events.jsonl is ahead of the manifest (crash mid-rollup)', async () => {
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ store })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const events = [threadStarted('thread-1'), ...(await grow(sessions, 10))]
    // Someone rewrote events.jsonl without recording it in the manifest.
    const keys = sessions.keys(ref)
    await store.put(keys.events, new TextEncoder().encode('{"garbage":true}\n'))
    const fresh = new SessionStore({ store })
    const page = await fresh.readEvents(ref, 0, 1000)
    expect(page.events.map((e) => e.line.event)).toEqual(events)
    // and the next rollup rebuilds the file from the batches
    const more = await grow(fresh, 20, 11)
    await fresh.commit(await fresh.open(ref), { events: [threadCompleted('thread-1', 30)] })
    const lines = decode((await store.get(keys.events))?.body)
      .trimEnd()
      .split('\n')
    expect(lines.map((l) => parseVersionedLine(l).event)).toEqual([
      ...events,
      ...more,
      threadCompleted('thread-1', 30),
    ])
  })
})
