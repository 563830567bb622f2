import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadCompleted, threadStarted, turnEvents } from '../support/sample-events.ts'
import { expectFilesMatch } from '../support/session-files.ts'

/**
 * On a store that appends, the batch is the durable record and events.jsonl is derived from it:
 * an ordinary commit appends its lines without a sync (the turn index too, always), and a
 * manifest — whose `events_bytes` vouch for the file — is written only after the file was synced
 * (by the commit's own append, synced when a manifest is expected, or by an append of no bytes).
 */
const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }

interface Write {
  op: 'put' | 'append'
  key: string
  durable: boolean
  bytes: number
}

function recording(inner: MemoryObjectStore): { store: ObjectStore; writes: Write[] } {
  const writes: Write[] = []
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: (key, body, options) => {
      writes.push({ op: 'put', key, durable: true, bytes: body.byteLength })
      return inner.put(key, body, options)
    },
    append: (key, bytes, options) => {
      const durable = options.durable !== false
      writes.push({ op: 'append', key, durable, bytes: bytes.byteLength })
      return inner.append!(key, bytes, options)
    },
  }
  return { store, writes }
}

describe('events.jsonl is synced only before a manifest vouches for it', () => {
  it('appends ordinary turns unsynced and syncs the file before every manifest', async () => {
    const inner = new MemoryObjectStore()
    const { store, writes } = recording(inner)
    const sessions = new SessionStore({ store, checkpointEvery: 8 })
    const committed: ThreadEvent[] = [threadStarted('thread-1')]
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    for (let n = 1; n <= 40; n++) {
      const events = turnEvents(n)
      await sessions.commit(await sessions.open(ref), { events })
      committed.push(...events)
    }
    // A manifest lagging its log by a checkpoint interval is written too: with checkpoints
    // failing it is the only reason left, and the guess before the append sees it.
    const last = threadCompleted('thread-1', 40)
    await sessions.commit(await sessions.open(ref), { events: [last] })
    committed.push(last)
    await expectFilesMatch(inner, ref.sessionId, committed)

    const keys = sessions.keys(ref)
    const events = writes.filter((w) => w.key === keys.events)
    const manifests = writes.filter((w) => w.key === keys.manifest)
    expect(manifests.length).toBeGreaterThanOrEqual(6) // created, 5 checkpoints, completed
    // Most appends are left unsynced: those of the turns that write no manifest.
    expect(events.filter((w) => !w.durable).length).toBeGreaterThanOrEqual(30)
    // The turn index is derived from the file's lines: never synced on its own.
    const index = writes.filter((w) => w.key === keys.turnIndex && w.op === 'append')
    expect(index.length).toBeGreaterThanOrEqual(39)
    expect(index.every((w) => !w.durable)).toBe(true)
    // Before every manifest write, the last write of events.jsonl was a synced one.
    writes.forEach((write, i) => {
      if (write.key !== keys.manifest) return
      const before = writes.slice(0, i).findLast((w) => w.key === keys.events)
      expect(before?.durable, `write ${i}`).toBe(true)
    })
  })

  it('syncs the file with an append of no bytes when a manifest comes due unforeseen', async () => {
    const inner = new MemoryObjectStore()
    const { store, writes } = recording(inner)
    const sessions = new SessionStore({ store, checkpointEvery: 8 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    for (let n = 1; n <= 3; n++) {
      await sessions.commit(
        await sessions.open(ref),
        { events: turnEvents(n) },
        { maintain: false },
      )
    }
    const keys = sessions.keys(ref)
    const lazy = writes.filter((w) => w.key === keys.events && !w.durable)
    expect(lazy.length).toBe(3)
    // The manifest is lost and asked for: it is written again, after a sync.
    await inner.delete(keys.manifest)
    writes.length = 0
    await sessions.manifest(ref)
    const manifestAt = writes.findIndex((w) => w.key === keys.manifest)
    expect(manifestAt).toBeGreaterThan(0)
    expect(writes.slice(0, manifestAt)).toContainEqual({
      op: 'append',
      key: keys.events,
      durable: true,
      bytes: 0,
    })
  })
})
