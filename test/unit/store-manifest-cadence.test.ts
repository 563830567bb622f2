import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryActivityIndex } from '../../adapters/memory/memory-activity-index.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseSessionManifest } from '../../src/contract/session-manifest.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listByActivity } from '../../src/store/activity-listing.ts'
import { toBytes } from '../../src/store/json-bytes.ts'
import { SessionLocator } from '../../src/store/session-locator.ts'
import type { SessionRef } from '../../src/store/session-ref.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadCompleted, threadStarted, turnEvents } from '../support/sample-events.ts'
import { readSessionFiles } from '../support/session-files.ts'

const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }

async function storedManifest(store: ObjectStore, sessions: SessionStore) {
  const object = await store.get(sessions.keys(ref).manifest)
  return object ? parseSessionManifest(object.body) : undefined
}

describe('when the manifest is written', () => {
  it('writes it at creation, at each checkpoint and at the end, not after every batch', async () => {
    for (const appendable of [false, true]) {
      const counting = countingObjectStore(new MemoryObjectStore({ appendable }))
      const sessions = new SessionStore({ store: counting.store, checkpointEvery: 4 })
      await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
      expect((await storedManifest(counting.store, sessions))?.last_batch).toBe(0)
      const writtenAt: number[] = []
      const putsPerCommit: number[] = []
      const appendsPerCommit: number[] = []
      for (let n = 1; n <= 9; n++) {
        counting.reset()
        await sessions.commit(await sessions.open(ref), { events: turnEvents(n) })
        putsPerCommit.push(counting.counts.put)
        appendsPerCommit.push(counting.counts.append)
        const stored = await storedManifest(counting.store, sessions)
        if (stored?.last_batch === n) writtenAt.push(n)
      }
      expect(writtenAt, `appendable: ${appendable}`).toEqual([3, 7])
      if (appendable) {
        // every commit appends its lines; a batch that ends a turn appends its entry to the turn
        // index; a checkpoint adds the checkpoint and the manifest
        expect(appendsPerCommit).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2])
        expect(putsPerCommit).toEqual([1, 1, 3, 1, 1, 1, 3, 1, 1])
      } else {
        // an ordinary commit is its batch alone; a checkpoint adds the checkpoint, a part of the
        // rolled events (the lines since the last one) and the manifest
        expect(appendsPerCommit).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0])
        expect(putsPerCommit).toEqual([1, 1, 4, 1, 1, 1, 4, 1, 1])
      }
      await sessions.commit(await sessions.open(ref), { events: [threadCompleted('thread-1', 9)] })
      expect(await storedManifest(counting.store, sessions)).toMatchObject({
        status: 'completed',
        last_batch: 10,
        turn_count: 9,
      })
    }
  })

  it('without appends, rolls a part of the events up with every manifest write, so they lag less than a checkpoint interval', async () => {
    const counting = countingObjectStore(new MemoryObjectStore({ appendable: false }))
    const sessions = new SessionStore({ store: counting.store, checkpointEvery: 8 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const eventsWrittenAt: number[] = []
    for (let n = 1; n <= 40; n++) {
      const before = (await storedManifest(counting.store, sessions))?.event_parts
      const { snapshot } = await sessions.commit(await sessions.open(ref), {
        events: turnEvents(n, 3),
      })
      const { lines } = await readSessionFiles(counting.store, ref.sessionId)
      const stored = await storedManifest(counting.store, sessions)
      // the stored manifest never counts an event the parts do not hold
      expect(stored?.format_version).toBe(2)
      expect(stored?.event_count).toBe(stored?.rolled_through)
      expect(lines.length).toBe(stored?.event_count ?? 0)
      // the lag bound: fewer than `checkpointEvery` batches
      expect(snapshot.lastBatch - (stored?.rolled_batch ?? -1)).toBeLessThan(8)
      if (JSON.stringify(stored?.event_parts) !== JSON.stringify(before)) {
        eventsWrittenAt.push(n)
        // the part goes with the checkpoint's manifest, which lists it
        expect(snapshot.checkpointBatch).toBe(n)
        expect(stored).toMatchObject({ last_batch: n, rolled_batch: n, checkpoint_batch: n })
        expect(lines).toHaveLength(1 + n * 5)
        // a part per rollup with the lines since the one before, joined with the last part when
        // that one holds fewer lines (the creation's one line, then 36 lines before 40)
        const parts = stored?.event_parts ?? []
        expect(parts.length).toBeLessThanOrEqual(eventsWrittenAt.length)
        expect(parts.at(-1)?.[1]).toBe(1 + n * 5)
        expect(parts.at(-1)?.[0]).toBeLessThanOrEqual(Math.max(0, 1 + (n - 8) * 5))
      }
    }
    expect(eventsWrittenAt).toEqual([7, 15, 23, 31, 39])
  })

  it('answers a lagging manifest as of the last batch without writing it', async () => {
    const counting = countingObjectStore(new MemoryObjectStore())
    const sessions = new SessionStore({ store: counting.store, checkpointEvery: 16 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    for (let n = 1; n <= 3; n++) {
      await sessions.commit(await sessions.open(ref), { events: turnEvents(n) })
    }
    expect((await storedManifest(counting.store, sessions))?.last_batch).toBe(0)
    counting.reset()
    const cold = new SessionStore({ store: counting.store })
    const manifest = await cold.manifest(ref)
    expect(manifest).toMatchObject({ last_batch: 3, turn_count: 3, status: 'active' })
    expect(counting.counts.put).toBe(0)
    const view = await cold.open(ref)
    expect(manifest.updated_at).toBe(view.updatedAt)
    expect(manifest.last_seq).toBe(view.nextSeq - 1)
  })

  it('lists each session as of its last batch', async () => {
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ store })
    const other = { ...ref, sessionId: 'session-2' }
    for (const r of [ref, other]) {
      await sessions.create(r, r.sessionId, { events: [threadStarted(r.sessionId)] })
    }
    for (let n = 1; n <= 5; n++) {
      await sessions.commit(await sessions.open(ref), { events: turnEvents(n) })
    }
    await sessions.commit(await sessions.open(other), { events: turnEvents(1) })
    await sessions.commit(await sessions.open(other), {
      events: [threadCompleted(other.sessionId, 1)],
    })
    const listed = await listed1(store, [ref, other])
    expect(listed.map((m) => [m.session_id, m.status, m.turn_count, m.last_batch])).toEqual([
      ['session-1', 'active', 5, 5],
      ['session-2', 'completed', 1, 2],
    ])
    expect(listed[0]).toEqual(await new SessionStore({ store }).manifest(ref))
  })

  it('leaves out a manifest that names no session of the tenant, without failing the page', async () => {
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ store })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const stored = await storedManifest(store, sessions)
    const odd = { ...stored!, session_id: 'odd', tenant: 'not a tenant!' }
    await store.put('t1/w1/.vtcode/sessions/odd/manifest.json', toBytes(JSON.stringify(odd)))
    const listed = await listed1(store, [ref, { ...ref, sessionId: 'odd' }])
    expect(listed.map((m) => [m.session_id, m.tenant])).toEqual([['session-1', 't1']])
  })
})

/** The manifests `GET /v1/sessions` lists of t1/w1, the least recently active first. */
async function listed1(store: ObjectStore, refs: readonly SessionRef[]) {
  const locator = new SessionLocator(store, '')
  for (const r of refs) await locator.register(r, new Date(0).toISOString())
  const index = new MemoryActivityIndex()
  const where = { objects: store, prefix: '', index, nowMs: Date.now() }
  const scope = { tenant: 't1', workspace: 'w1' }
  const page = await listByActivity(where, scope, { limit: 50, order: 'oldest' })
  return page.sessions.map((s) => s.manifest)
}
