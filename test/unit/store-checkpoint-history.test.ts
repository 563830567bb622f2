import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseCheckpoint, serializeCheckpoint } from '../../src/contract/checkpoint.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { readKeysStore } from '../support/read-keys-store.ts'
import { threadStarted, turnEvents } from '../support/sample-events.ts'

/**
 * Checkpoint version 4 names its transcript instead of writing it again (`history_from`): the
 * batches since the segment started (or since the last checkpoint that holds one) already hold
 * it. A checkpoint writes the transcript whole only once those batches would number more than
 * `checkpointHistoryBatches`, so a cold reader reads a bounded number of objects however long
 * the session, and the same snapshot as a warm one.
 */
const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }
const decode = (body: Uint8Array | undefined) => new TextDecoder().decode(body)

const said = (n: number): HistoryMessage[] => [
  { role: 'user', content: `task ${n}` },
  { role: 'assistant', content: `answer ${n}: ${'a'.repeat(200)}` },
]

async function session(store: ObjectStore, turns: number, resetAt: number[] = []) {
  const options = { store, checkpointEvery: 4, checkpointHistoryBatches: 12 }
  const sessions = new SessionStore(options)
  await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
  for (let n = 1; n <= turns; n++) {
    const reset = resetAt.includes(n)
    const history = { ...(reset ? { reset: true } : {}), append: said(n) }
    await sessions.commit(await sessions.open(ref), { events: turnEvents(n), history })
  }
  return { sessions, options, warm: await sessions.open(ref) }
}

async function checkpoints(store: MemoryObjectStore, sessions: SessionStore) {
  const keys = sessions.keys(ref)
  const page = await store.list(`${keys.root}state/`)
  return Promise.all(
    page.objects.map(async (o) => parseCheckpoint(decode((await store.get(o.key))?.body))),
  )
}

describe('checkpoints that name their transcript (version 4)', () => {
  it('name the batches while they are few, hold the transcript beyond, and read back the same', async () => {
    const store = new MemoryObjectStore()
    const { sessions, options, warm } = await session(store, 30)
    const written = await checkpoints(store, sessions)
    expect(written.map((c) => c.batch)).toEqual([3, 7, 11, 15, 19, 23, 27])
    // Batches 0–11 named, then the transcript written whole at 15, then named after it again.
    expect(written.map((c) => c.history_from ?? 'whole')).toEqual([
      { batch: 0 },
      { batch: 0 },
      { batch: 0 },
      'whole',
      { checkpoint: 15, batch: 16 },
      { checkpoint: 15, batch: 16 },
      { checkpoint: 15, batch: 16 },
    ])
    expect(written.every((c) => c.version === 4)).toBe(true)
    // A cold process: the same snapshot, from the manifest's checkpoint (27), the one it names
    // (15), and the batches from 16 on — none older.
    const { store: reading, reads } = readKeysStore(store)
    const cold = new SessionStore({ ...options, store: reading })
    const snapshot = await cold.open(ref)
    expect(snapshot.history).toEqual(warm.history)
    expect(snapshot.history.length).toBe(60)
    expect(snapshot.state).toEqual(warm.state)
    const batches = reads.filter((k) => k.includes('/log/')).map((k) => Number(k.slice(-15, -5)))
    expect(Math.min(...batches)).toBe(16)
    expect(reads.filter((k) => k.includes('/state/')).map((k) => k.slice(-15, -5))).toEqual([
      '0000000027',
      '0000000015',
    ])
  })

  it('start over at a reset: the checkpoint names the batch that reset', async () => {
    const store = new MemoryObjectStore()
    const { sessions, options, warm } = await session(store, 12, [6])
    const written = await checkpoints(store, sessions)
    const after = written.filter((c) => c.batch >= 6)
    expect(after[0]).toMatchObject({ batch: 6, history_from: { batch: 6 } })
    expect(after.at(-1)?.history_from).toEqual({ batch: 6 })
    const snapshot = await new SessionStore(options).open(ref)
    expect(snapshot.history).toEqual(warm.history)
    expect(snapshot.history[0]).toEqual({ role: 'user', content: 'task 6' })
  })

  it('fold the log from the start when a checkpoint named is gone', async () => {
    const store = new MemoryObjectStore()
    const { sessions, options, warm } = await session(store, 30)
    await store.delete(`${sessions.keys(ref).root}state/0000000015.json`)
    const snapshot = await new SessionStore(options).open(ref)
    expect(snapshot.history).toEqual(warm.history)
  })

  it('refuse a checkpoint with both forms, or neither, or names out of order', () => {
    const doc = JSON.parse(text('v4/checkpoint-named.json'))
    const bad = [
      { ...doc, history: [] },
      { ...doc, history_from: undefined },
      { ...doc, history_from: { batch: doc.batch + 2 } },
      { ...doc, history_from: { checkpoint: 3, batch: 3 } },
    ]
    for (const value of bad) {
      expect(() => parseCheckpoint(JSON.stringify(value))).toThrow(
        expect.objectContaining({ code: 'corrupt_data' }),
      )
    }
    // Only version 4 names its transcript: a version 3 checkpoint holds it, whatever else it says.
    const v3 = JSON.parse(text('v3/checkpoint-order.json'))
    const read = parseCheckpoint(JSON.stringify({ ...v3, history_from: { batch: 0 } }))
    expect(read.history_from).toBeUndefined()
    expect(read.history?.length).toBe(v3.history.length)
  })

  it('reads the version 4 fixture byte for byte', () => {
    const source = text('v4/checkpoint-named.json')
    const checkpoint = parseCheckpoint(source)
    expect(checkpoint).toMatchObject({ version: 4, history_from: { checkpoint: 15, batch: 16 } })
    expect(checkpoint.history).toBeUndefined()
    expect(serializeCheckpoint(checkpoint)).toBe(source)
  })
})

function text(path: string): string {
  return readFileSync(new URL(`../fixtures/store/${path}`, import.meta.url), 'utf8')
}
