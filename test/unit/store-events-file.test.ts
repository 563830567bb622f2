import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { serializeVersionedLine } from '../../src/contract/serialize.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { crashingObjectStore } from '../support/crashing-object-store.ts'
import { recordingEventsWrites } from '../support/events-file-writes.ts'
import { threadStarted, turnEvents } from '../support/sample-events.ts'
import { expectFilesMatch, readSessionFiles } from '../support/session-files.ts'

const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }
const encode = (text: string) => new TextEncoder().encode(text)
const decode = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes)

/** A session with `turns` turns, each committed in one batch; returns every committed event. */
async function started(store: ObjectStore, turns: number, options = {}) {
  const sessions = new SessionStore({ store, ...options })
  const committed: ThreadEvent[] = [threadStarted('thread-1')]
  await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
  for (let n = 1; n <= turns; n++) committed.push(...(await turn(sessions, n)))
  return { sessions, committed, keys: sessions.keys(ref) }
}

async function turn(sessions: SessionStore, n: number): Promise<ThreadEvent[]> {
  const events = turnEvents(n)
  await sessions.commit(await sessions.open(ref), { events })
  return events
}

async function fileText(store: ObjectStore, sessions: SessionStore): Promise<string> {
  return decode((await store.get(sessions.keys(ref).events))?.body)
}

describe('events.jsonl on a store that appends', () => {
  it('a torn append is found and cut off, and its batch written whole, before the next append', async () => {
    const store = new MemoryObjectStore()
    const { committed } = await started(store, 2)
    // the third turn's writer dies inside its append: half its lines reach the file
    const dying = crashingObjectStore(store, 2, 'torn')
    const victim = new SessionStore({ store: dying.store })
    const events = turnEvents(3)
    const result = await victim.commit(await victim.open(ref), { events })
    expect(String(result.maintenanceError)).toContain('crash torn append')
    committed.push(...events)
    const torn = await fileText(store, victim)
    expect(torn.endsWith('\n')).toBe(false)
    // the next writer (a fresh process) repairs it before appending its own turn
    const next = new SessionStore({ store })
    committed.push(...(await turn(next, 4)))
    await expectFilesMatch(store, ref.sessionId, committed)
  })

  it('cuts off bytes after the last line that no batch wrote, and lines of a batch the log lost', async () => {
    for (const junk of [
      '\0\0\0\0',
      '{"schema_version":"0.11.0","event":{"type":"turn.started"}}\n',
    ]) {
      const store = new MemoryObjectStore()
      const { committed, keys } = await started(store, 2)
      const file = await store.get(keys.events)
      const size = file?.body.length ?? 0
      // a power loss kept an append whose batch never became durable, or garbage past the end
      await store.append?.(keys.events, encode(junk), { at: size, ifSize: size })
      const next = new SessionStore({ store })
      committed.push(...(await turn(next, 3)))
      await expectFilesMatch(store, ref.sessionId, committed, JSON.stringify(junk))
    }
  })

  it('a crash between the commit and its append: the next writer appends the missing lines', async () => {
    const store = new MemoryObjectStore()
    const { committed } = await started(store, 1)
    const dying = crashingObjectStore(store, 2, 'before') // write 1: the batch, 2: its append
    const victim = new SessionStore({ store: dying.store })
    const events = turnEvents(2)
    const result = await victim.commit(await victim.open(ref), { events })
    expect(String(result.maintenanceError)).toContain('crash before append')
    committed.push(...events)
    expect((await readSessionFiles(store, ref.sessionId)).events).toHaveLength(committed.length - 3)
    const next = new SessionStore({ store })
    committed.push(...(await turn(next, 3)))
    await expectFilesMatch(store, ref.sessionId, committed)
  })

  it('a new process trusts the file up to the manifest’s events_bytes, reading no older batch', async () => {
    const counting = countingObjectStore(new MemoryObjectStore())
    // Checkpoints that hold their transcript: rehydration then reads no batch before the
    // checkpoint, so every batch read older than the manifest's would be the file's check.
    const options = { checkpointEvery: 8, checkpointHistoryBatches: 0 }
    const { committed } = await started(counting.store, 20, options)
    counting.reset()
    const batchReads: string[] = []
    const store: ObjectStore = {
      ...counting.store,
      get: (key) => {
        if (key.includes('/log/')) batchReads.push(key.slice(-15, -5))
        return counting.store.get(key)
      },
    }
    const cold = new SessionStore({ store })
    committed.push(...(await turn(cold, 21)))
    await expectFilesMatch(counting.store, ref.sessionId, committed)
    // the manifest was written at batch 15 (a checkpoint): the boundary batch and the ones after
    // the manifest was written at batch 15 (a checkpoint): rehydration reads the batches after
    // it, and the file's check the boundary batch and those again — never an older one
    expect(Math.min(...batchReads.map(Number))).toBe(15)
    expect(new Set(batchReads).size).toBe(6)
    expect(counting.counts.put + counting.counts.append).toBe(3) // batch, append, turn index
  })

  it('keeps VT Code’s cap: cuts old turns down to four fifths of it, then appends again', async () => {
    const { store, rewrites } = recordingEventsWrites(new MemoryObjectStore())
    const { sessions, committed } = await started(store, 10, { maxRetainedEvents: 20 })
    await expectFilesMatch(store, ref.sessionId, committed)
    const files = await readSessionFiles(store, ref.sessionId)
    expect(files.events.length).toBeLessThanOrEqual(20)
    // one cut per 4 events of room (each turn is 3 events): far fewer rewrites than turns
    expect(rewrites.length).toBeLessThanOrEqual(4)
    // turn numbers stay those of the whole session
    expect(files.index?.entries.at(-1)?.turn_number).toBe(10)
    const manifest = await sessions.manifest(ref)
    expect(manifest.rolled_head_seq).toBe(committed.length - files.events.length)
  })

  it('a cut whose manifest was lost in a crash is found, and the file rebuilt from the log', async () => {
    const store = new MemoryObjectStore()
    const { committed, keys } = await started(store, 6, { maxRetainedEvents: 12 })
    // the manifest still describes the file before a cut, which another writer then made and
    // died before recording
    const before = await store.get(keys.manifest)
    const cut = new SessionStore({ store, maxRetainedEvents: 12 })
    committed.push(...(await turn(cut, 7)))
    await store.put(keys.manifest, before?.body ?? new Uint8Array(0))
    const next = new SessionStore({ store, maxRetainedEvents: 12 })
    committed.push(...(await turn(next, 8)))
    await expectFilesMatch(store, ref.sessionId, committed)
  })

  it('a writer whose copy names a replaced file never writes into the new one', async () => {
    const store = new MemoryObjectStore()
    const { sessions, committed, keys } = await started(store, 2)
    // someone replaced events.jsonl meanwhile with a damaged file of the same size
    const file = await store.get(keys.events)
    const damaged = (file?.body ?? new Uint8Array(0)).map((byte) => (byte === 0x7b ? 0x5b : byte))
    await store.put(keys.events, damaged)
    committed.push(...(await turn(sessions, 3)))
    await expectFilesMatch(store, ref.sessionId, committed)
  })

  it('writes the turn index once a batch ends a turn, from what it appended', async () => {
    const counting = countingObjectStore(new MemoryObjectStore())
    const { sessions, committed, keys } = await started(counting.store, 1)
    const [first, ...rest] = turnEvents(2, 2) as [ThreadEvent, ...ThreadEvent[]]
    const indexWrites = async (events: ThreadEvent[]) => {
      counting.reset()
      const before = (await counting.store.get(keys.turnIndex))?.etag
      await sessions.commit(await sessions.open(ref), { events })
      committed.push(...events)
      await expectFilesMatch(counting.store, ref.sessionId, committed)
      return (await counting.store.get(keys.turnIndex))?.etag === before ? 0 : 1
    }
    expect(await indexWrites([first])).toBe(0)
    expect(await indexWrites(rest)).toBe(1)
    expect(serializeVersionedLine(first)).toBe(
      (await readSessionFiles(counting.store, ref.sessionId)).lines.at(-4),
    )
  })
})
