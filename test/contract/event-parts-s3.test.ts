import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serializeVersionedLine } from '../../src/contract/serialize.ts'
import {
  parseSessionManifest,
  serializeSessionManifest,
} from '../../src/contract/session-manifest.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { toBytes } from '../../src/store/json-bytes.ts'
import { listAll } from '../../src/store/list-all.ts'
import { readBatches } from '../../src/store/rehydrate.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadCompleted, threadStarted, turnEvents } from '../support/sample-events.ts'
import { requireServices } from '../support/services.ts'
import { readSessionFiles } from '../support/session-files.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * The rolled events on S3 (moto) as parts (store/event-parts.ts): what a reader gets — every
 * page of the events, as `GET …/events`, its SSE resume and the exports read them — is the same
 * bytes as the batches' canonical lines, before and after a format-1 `events.jsonl` is turned
 * into parts, and across cuts of the head.
 */
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let stores = 0
beforeAll(async () => {
  bucket = await createTestBucket(requireServices().s3, 'parts')
})
afterAll(async () => {
  await bucket?.destroy()
})

const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }

async function grow(sessions: SessionStore, from: number, turns: number) {
  for (let n = from; n < from + turns; n++) {
    await sessions.commit(await sessions.open(ref), { events: turnEvents(n, 3) })
  }
}

/** Every page of the events from `from`, `limit` at a time, as the feed's texts. */
async function feed(store: ObjectStore, from: number, limit: number): Promise<string[]> {
  const sessions = new SessionStore({ store })
  const texts: string[] = []
  for (let next = from; ; ) {
    const page = await sessions.readEvents(ref, next, limit)
    for (const e of page.events) texts.push(e.text ?? serializeVersionedLine(e.line.event))
    next = page.nextSeq
    if (page.complete) return texts
  }
}

/** The canonical lines of every committed event, from the batches. */
async function canonical(store: ObjectStore, sessions: SessionStore): Promise<string[]> {
  const keys = sessions.keys(ref)
  const { objects } = await listAll(store, keys.logPrefix)
  const batches = await readBatches(
    store,
    keys,
    objects.map((_, i) => i),
  )
  return batches.flatMap((b) => b.events.map((line) => serializeVersionedLine(line.event)))
}

describe('event parts on S3', () => {
  it('serves the same bytes before and after a format-1 events.jsonl becomes parts', async () => {
    const store = bucket.store(`p${++stores}`)
    const sessions = new SessionStore({ store, checkpointEvery: 4 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    await grow(sessions, 1, 10)
    // As written before parts: one events.jsonl, its etag in a format-1 manifest.
    const keys = sessions.keys(ref)
    const { lines } = await readSessionFiles(store, ref.sessionId)
    const manifest = parseSessionManifest((await store.get(keys.manifest))?.body ?? '')
    const { etag } = await store.put(keys.events, toBytes(lines.map((l) => `${l}\n`).join('')))
    for (const [f, e] of manifest.event_parts ?? []) await store.delete(keys.eventPart(f, e))
    const { event_parts: _, ...legacy } = manifest
    await store.put(
      keys.manifest,
      toBytes(serializeSessionManifest({ ...legacy, format_version: 1, rollup_etag: etag })),
    )
    const before = { all: await feed(store, 0, 9), resumed: await feed(store, 17, 4) }
    expect(before.all).toEqual(await canonical(store, sessions))

    const next = new SessionStore({ store, checkpointEvery: 4 })
    await grow(next, 11, 6)
    await next.commit(await next.open(ref), { events: [threadCompleted('thread-1', 16)] })
    const after = parseSessionManifest((await store.get(keys.manifest))?.body ?? '')
    expect(after.format_version).toBe(2)
    expect(await store.get(keys.events)).toBeNull()
    const all = await feed(store, 0, 9)
    expect(all).toEqual(await canonical(store, sessions))
    expect(all.slice(0, before.all.length)).toEqual(before.all)
    expect((await feed(store, 17, 4)).slice(0, before.resumed.length)).toEqual(before.resumed)
  }, 120_000)

  it('serves the same bytes across cuts of the head', async () => {
    const store = bucket.store(`p${++stores}`)
    const sessions = new SessionStore({ store, checkpointEvery: 2, maxRetainedEvents: 30 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const keys = sessions.keys(ref)
    let heads = 0
    for (let n = 1; n <= 24; n += 4) {
      await grow(sessions, n, 4)
      const manifest = parseSessionManifest((await store.get(keys.manifest))?.body ?? '')
      if (manifest.rolled_head_seq > heads) heads = manifest.rolled_head_seq
      const everything = await canonical(store, sessions)
      // from the start (the batches, then the parts from the head), from inside the first part
      // (read from the head on) and from the newest events (batches not rolled yet)
      expect(await feed(store, 0, 25)).toEqual(everything)
      const head = manifest.rolled_head_seq
      expect(await feed(store, head, 15)).toEqual(everything.slice(head))
      expect(await feed(store, head + 1, 7)).toEqual(everything.slice(head + 1))
      expect(await feed(store, everything.length - 2, 5)).toEqual(everything.slice(-2))
      // only listed parts are left in the bucket once a manifest without them is in force
      const parts = (manifest.event_parts ?? []).map(([f, e]) => keys.eventPart(f, e))
      const left = (await listAll(store, `${keys.root}events/`)).objects.map((o) => o.key)
      expect(left.sort()).toEqual(parts.sort())
    }
    expect(heads).toBeGreaterThan(30)
  }, 120_000) // ~150 object requests a round on moto; slow on a loaded machine
})
