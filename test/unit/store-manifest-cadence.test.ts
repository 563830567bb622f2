import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseSessionManifest } from '../../src/contract/session-manifest.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { toBytes } from '../../src/store/json-bytes.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadCompleted, threadStarted, turnEvents } from '../support/sample-events.ts'

const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }

async function storedManifest(store: ObjectStore, sessions: SessionStore) {
  const object = await store.get(sessions.keys(ref).manifest)
  return object ? parseSessionManifest(object.body) : undefined
}

describe('when the manifest is written', () => {
  it('writes it at creation, at each checkpoint and at the end, not after every batch', async () => {
    const counting = countingObjectStore(new MemoryObjectStore())
    const sessions = new SessionStore({ store: counting.store, checkpointEvery: 4 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    expect((await storedManifest(counting.store, sessions))?.last_batch).toBe(0)
    const writtenAt: number[] = []
    const putsPerCommit: number[] = []
    for (let n = 1; n <= 9; n++) {
      counting.reset()
      await sessions.commit(await sessions.open(ref), { events: turnEvents(n) })
      putsPerCommit.push(counting.counts.put)
      const stored = await storedManifest(counting.store, sessions)
      if (stored?.last_batch === n) writtenAt.push(n)
    }
    expect(writtenAt).toEqual([3, 7])
    // an ordinary commit is its batch alone; a checkpoint adds the checkpoint and the manifest
    expect(putsPerCommit).toEqual([1, 1, 3, 1, 1, 1, 3, 1, 1])
    await sessions.commit(await sessions.open(ref), { events: [threadCompleted('thread-1', 9)] })
    expect(await storedManifest(counting.store, sessions)).toMatchObject({
      status: 'completed',
      last_batch: 10,
      turn_count: 9,
    })
  })

  it('rolls events.jsonl up only with a manifest write that is due anyway, never losing it', async () => {
    const counting = countingObjectStore(new MemoryObjectStore())
    const sessions = new SessionStore({ store: counting.store, checkpointEvery: 8 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const keys = sessions.keys(ref)
    const eventsWrittenAt: number[] = []
    for (let n = 1; n <= 40; n++) {
      const before = (await counting.store.get(keys.events))?.etag
      counting.reset()
      const { snapshot } = await sessions.commit(await sessions.open(ref), {
        events: turnEvents(n, 3),
      })
      if ((await counting.store.get(keys.events))?.etag !== before) {
        eventsWrittenAt.push(n)
        // the rollup's manifest is the checkpoint's: same commit, and it records the rollup
        expect(snapshot.checkpointBatch).toBe(n)
        const stored = await storedManifest(counting.store, sessions)
        expect(stored).toMatchObject({ last_batch: n, rolled_batch: n, checkpoint_batch: n })
        expect(stored?.rollup_etag).toBe((await counting.store.get(keys.events))?.etag)
      }
    }
    // geometric: the file is rewritten when the unrolled events caught up with the rolled ones
    expect(eventsWrittenAt).toEqual([15, 31])
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
    const { sessions: listed } = await new SessionStore({ store }).list('t1', 'w1')
    expect(listed.map((m) => [m.session_id, m.status, m.turn_count, m.last_batch])).toEqual([
      ['session-1', 'active', 5, 5],
      ['session-2', 'completed', 1, 2],
    ])
    expect(listed[0]).toEqual(await new SessionStore({ store }).manifest(ref))
  })

  it('lists a manifest that names no valid session as stored, without failing the page', async () => {
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ store })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const stored = await storedManifest(store, sessions)
    const odd = { ...stored!, session_id: 'odd', tenant: 'not a tenant!' }
    await store.put('t1/w1/.vtcode/sessions/odd/manifest.json', toBytes(JSON.stringify(odd)))
    const { sessions: listed } = await new SessionStore({ store }).list('t1', 'w1')
    expect(listed.map((m) => [m.session_id, m.tenant])).toEqual([
      ['odd', 'not a tenant!'],
      ['session-1', 't1'],
    ])
  })
})
