import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import {
  parseSessionManifest,
  type SessionManifest,
  serializeSessionManifest,
} from '../../src/contract/session-manifest.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { toBytes } from '../../src/store/json-bytes.ts'
import { listAll } from '../../src/store/list-all.ts'
import { manifestOf as manifestOf2, rollupStateOf } from '../../src/store/manifest-sync.ts'
import { deleteSessionFolder } from '../../src/store/retention.ts'
import { rollup } from '../../src/store/rollup.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { commitTurns } from '../support/commit-turns.ts'
import { crashingObjectStore, SimulatedCrash } from '../support/crashing-object-store.ts'
import { threadCompleted, threadStarted, turnEvents } from '../support/sample-events.ts'
import { expectFilesMatch, readSessionFiles } from '../support/session-files.ts'

/**
 * The rolled events on a store that cannot append (as S3): create-only parts, one per rollup
 * with the lines since the one before, listed in a format-2 manifest (store/event-parts.ts).
 */
const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }

const grow = (sessions: SessionStore, from: number, turns: number) =>
  commitTurns(sessions, ref, from, turns)

async function manifestOf(store: ObjectStore, sessions: SessionStore): Promise<SessionManifest> {
  const stored = await store.get(sessions.keys(ref).manifest)
  if (!stored) throw new Error('no manifest')
  return parseSessionManifest(stored.body)
}

/** Every page of the events, as the feed serves them (the text of each line). */
async function feed(sessions: SessionStore, from = 0, limit = 7): Promise<string[]> {
  const texts: string[] = []
  let next = from
  for (;;) {
    const page = await sessions.readEvents(ref, next, limit)
    for (const e of page.events) texts.push(e.text ?? JSON.stringify(e.line))
    next = page.nextSeq
    if (page.complete) return texts
  }
}

/** What the batches alone say (a store whose manifest lists no rolled events). */
async function fromBatches(store: ObjectStore, sessions: SessionStore): Promise<ThreadEvent[]> {
  const copy = new MemoryObjectStore({ appendable: false })
  const { objects } = await listAll(store, sessions.keys(ref).logPrefix)
  for (const { key } of objects) {
    const body = (await store.get(key))?.body
    if (body) await copy.put(key, body)
  }
  const page = await new SessionStore({ store: copy }).readEvents(ref, 0, 100_000)
  return page.events.map((e) => e.line.event as ThreadEvent)
}

describe('event parts (a store that cannot append)', () => {
  it('writes a part per rollup, never a rewrite of the rolled events, until the cap', async () => {
    const counting = countingObjectStore(new MemoryObjectStore({ appendable: false }))
    const written = new Map<string, number>()
    const store: ObjectStore = {
      ...counting.store,
      put: (key, body, options) => {
        written.set(key, (written.get(key) ?? 0) + 1)
        return counting.store.put(key, body, options)
      },
    }
    const sessions = new SessionStore({ store, checkpointEvery: 4 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const events = [threadStarted('thread-1'), ...(await grow(sessions, 1, 40))]
    await sessions.commit(await sessions.open(ref), { events: [threadCompleted('thread-1', 40)] })
    events.push(threadCompleted('thread-1', 40))
    const manifest = await manifestOf(store, sessions)
    expect(manifest.format_version).toBe(2)
    expect(manifest.rollup_etag).toBeUndefined()
    // no part written twice; besides the listed ones, only small parts joined into the next
    const partKeys = [...written.keys()].filter((k) => k.includes('/events/'))
    expect([...written.entries()].filter(([k, n]) => k.includes('/events/') && n > 1)).toEqual([])
    const listed = (manifest.event_parts ?? []).map(([f, e]) => sessions.keys(ref).eventPart(f, e))
    expect(listed.every((k) => partKeys.includes(k))).toBe(true)
    expect(counting.counts.bytesWritten).toBeGreaterThan(0)
    expect([...written.keys()].some((k) => k.endsWith('/events.jsonl'))).toBe(false)
    expect([...written.keys()].some((k) => k.endsWith('/index/turns.json'))).toBe(false)
    const files = await readSessionFiles(store, ref.sessionId)
    expect(files.lines).toHaveLength(events.length)
    await expectFilesMatch(store, ref.sessionId, events)
    expect(await feed(sessions)).toEqual(files.lines)
    expect(await feed(sessions, 13, 5)).toEqual(files.lines.slice(13))
  })

  it('cuts the head at the cap as before: whole parts before it are deleted, the first read from the head', async () => {
    const store = new MemoryObjectStore({ appendable: false })
    const sessions = new SessionStore({ store, maxRetainedEvents: 40, checkpointEvery: 2 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const events = [threadStarted('thread-1'), ...(await grow(sessions, 1, 30))]
    await sessions.commit(await sessions.open(ref), { events: [threadCompleted('thread-1', 30)] })
    events.push(threadCompleted('thread-1', 30))
    const manifest = await manifestOf(store, sessions)
    const head = manifest.rolled_head_seq
    expect(head).toBeGreaterThan(0)
    expect(manifest.event_count).toBeLessThanOrEqual(40)
    const parts = manifest.event_parts ?? []
    expect(parts[0]?.[0]).toBeLessThanOrEqual(head)
    expect(parts[0]?.[1]).toBeGreaterThan(head)
    // only the parts the manifest lists are left
    const left = await listAll(store, `${sessions.keys(ref).root}events/`)
    expect(left.objects.map((o) => o.key).sort()).toEqual(
      parts.map(([f, e]) => sessions.keys(ref).eventPart(f, e)).sort(),
    )
    await expectFilesMatch(store, ref.sessionId, events)
    const texts = await feed(sessions, head, 6)
    expect(texts).toEqual((await readSessionFiles(store, ref.sessionId)).lines)
    // before the head, the batches serve the events
    const page = await sessions.readEvents(ref, 0, 10)
    expect(page.events.map((e) => e.line.event)).toEqual(events.slice(0, 10))
  })

  it('reads only the parts that hold the page', async () => {
    const inner = new MemoryObjectStore({ appendable: false })
    const sessions = new SessionStore({ store: inner, checkpointEvery: 2 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    await grow(sessions, 1, 20)
    const parts = (await manifestOf(inner, sessions)).event_parts ?? []
    expect(parts.length).toBeGreaterThan(5)
    const counting = countingObjectStore(inner)
    const reader = new SessionStore({ store: counting.store })
    const [first, end] = parts[3] as [number, number]
    await reader.readEvents(ref, first + 1, end - first - 1)
    const gets = counting.counts.get
    counting.reset()
    await reader.readEvents(ref, 0, 100_000)
    // the whole feed reads every part; a page inside one part reads that part (and the manifest
    // and the probe of the log's tail, as every read does)
    expect(gets).toBeLessThan(counting.counts.get - parts.length + 2)
  })

  it('turns a format-1 events.jsonl into a part at the first rollup; the feed stays byte-identical', async () => {
    const store = new MemoryObjectStore({ appendable: false })
    const sessions = new SessionStore({ store, checkpointEvery: 4 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    await grow(sessions, 1, 8)
    // As a session written before parts: one events.jsonl, its etag in a format-1 manifest.
    const keys = sessions.keys(ref)
    const { lines } = await readSessionFiles(store, ref.sessionId)
    const manifest = await manifestOf(store, sessions)
    const { etag } = await store.put(keys.events, toBytes(lines.map((l) => `${l}\n`).join('')))
    await store.put(keys.turnIndex, toBytes('{"entries":[]}'))
    for (const [f, e] of manifest.event_parts ?? []) await store.delete(keys.eventPart(f, e))
    const { event_parts: _, ...legacy } = manifest
    const v1 = serializeSessionManifest({ ...legacy, format_version: 1, rollup_etag: etag })
    await store.put(keys.manifest, toBytes(v1))
    const old = new SessionStore({ store, checkpointEvery: 4 })
    const before = await feed(old)
    expect(before.slice(0, lines.length)).toEqual(lines)

    const more = await grow(old, 9, 8)
    const after = await manifestOf(store, old)
    expect(after.format_version).toBe(2)
    // the first rollup wrote the old file's lines and the new ones as one part; later ones add
    const [first] = after.event_parts ?? []
    expect(first?.[0]).toBe(0)
    expect(first?.[1]).toBeGreaterThan(manifest.rolled_through)
    expect(await store.get(keys.events)).toBeNull()
    expect(await store.get(keys.turnIndex)).toBeNull()
    const texts = await feed(new SessionStore({ store }))
    expect(texts.slice(0, before.length)).toEqual(before)
    expect(texts).toHaveLength(before.length + more.length)
    expect(texts.map((t) => JSON.parse(t).event)).toEqual(await fromBatches(store, sessions))
  })

  it('two writers rolling up at once (the same batches, or one further) both stand; either manifest reads back', async () => {
    const store = new MemoryObjectStore({ appendable: false })
    const sessions = new SessionStore({ store, checkpointEvery: 4 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const events = [threadStarted('thread-1'), ...(await grow(sessions, 1, 6))]
    const keys = sessions.keys(ref)
    const manifest = await manifestOf(store, sessions)
    const state = rollupStateOf(manifest)
    const snapshot = await new SessionStore({ store }).open(ref)
    const shorter = await new SessionStore({ store }).open(ref)
    const [x, y] = await Promise.all([
      rollup(store, keys, snapshot, state),
      rollup(store, keys, snapshot, state),
    ])
    expect(y?.state).toEqual(x?.state)
    // the same part, created once: the second create found the same bytes there
    expect(x?.state.parts?.at(-1)).toEqual([manifest.rolled_through, snapshot.nextSeq])
    for (const rolled of [x, y]) {
      if (!rolled) throw new Error('a rollup was lost')
      const next = { ...manifestOf2(snapshot, rolled.state) }
      await store.put(keys.manifest, toBytes(serializeSessionManifest(next)))
      const texts = await feed(new SessionStore({ store }))
      expect(texts.map((t) => JSON.parse(t).event)).toEqual(events)
    }
    expect(shorter.nextSeq).toBe(snapshot.nextSeq)
  })

  it('a part gone missing: the feed reads the batches, the next rollup rebuilds one part', async () => {
    const store = new MemoryObjectStore({ appendable: false })
    const sessions = new SessionStore({ store, checkpointEvery: 2 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const events = [threadStarted('thread-1'), ...(await grow(sessions, 1, 10))]
    const keys = sessions.keys(ref)
    const parts = (await manifestOf(store, sessions)).event_parts ?? []
    const [f, e] = parts[1] as [number, number]
    await store.delete(keys.eventPart(f, e))
    const fresh = new SessionStore({ store, checkpointEvery: 2 })
    const page = await fresh.readEvents(ref, 0, 100_000)
    expect(page.events.map((x) => x.line.event)).toEqual(events)
    const more = await grow(fresh, 11, 2)
    const after = await manifestOf(store, fresh)
    expect(after.event_parts).toEqual([[0, after.rolled_through]])
    const done = threadCompleted('thread-1', 12)
    await fresh.commit(await fresh.open(ref), { events: [done] })
    await expectFilesMatch(store, ref.sessionId, [...events, ...more, done])
  })
})

describe('a writer whose cached manifest is stale', () => {
  it('never records parts another writer deleted', async () => {
    const store = new MemoryObjectStore({ appendable: false })
    const options = { store, maxRetainedEvents: 30, checkpointEvery: 2 }
    const a = new SessionStore(options)
    await a.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    await grow(a, 1, 4)
    // another writer takes the session on, past cuts of the head that delete old parts
    const b = new SessionStore(options)
    await grow(b, 5, 8)
    // the first writer comes back with what it cached
    await grow(a, 13, 2)
    const manifest = await manifestOf(store, a)
    for (const [f, e] of manifest.event_parts ?? []) {
      expect(await store.get(a.keys(ref).eventPart(f, e)), `part ${f}-${e}`).not.toBeNull()
    }
  })
})

describe('parts a writer left unlisted (it died before its manifest)', () => {
  it('are one per lost rollup, each the lines since the manifest in force; never read, deleted with the session', async () => {
    const store = new MemoryObjectStore({ appendable: false })
    const healthy = new SessionStore({ store, checkpointEvery: 4 })
    await healthy.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const events = [threadStarted('thread-1'), ...(await grow(healthy, 1, 8))]
    const keys = healthy.keys(ref)
    const inForce = await manifestOf(store, healthy)
    // Three writers in turn, each dying as it writes the manifest its rollup is due for.
    let turn = 9
    for (let writer = 0; writer < 3; writer++) {
      const dying = crashingObjectStore(store, (key) => key === keys.manifest, 'before')
      const sessions = new SessionStore({ store: dying.store, checkpointEvery: 4 })
      while (!dying.crashed()) {
        const e = turnEvents(turn++, 3)
        await sessions.commit(await sessions.open(ref), { events: e }).catch((error) => {
          if (!(error instanceof SimulatedCrash)) throw error
        })
        events.push(...e)
      }
    }
    const listed = (m: SessionManifest) =>
      new Set((m.event_parts ?? []).map(([f, e]) => `${f}-${e}`))
    const parts = async () =>
      (await listAll(store, `${keys.root}events/`)).objects.map((o) =>
        o.key.slice(-27, -6).split('-').map(Number),
      )
    // The manifest in force is the one before them; each left one part of the lines since it.
    expect(await manifestOf(store, healthy)).toEqual(inForce)
    const unlisted = (await parts()).filter(([f, e]) => !listed(inForce).has(`${f}-${e}`))
    expect(unlisted).toHaveLength(3)
    for (const [first] of unlisted) expect(first).toBe(inForce.rolled_through)
    // Each writer's reaches its own last event: a later one's is longer, the manifest staying behind.
    const ends = unlisted.map(([, end]) => end as number)
    expect(ends).toEqual([...ends].sort((a, b) => a - b))
    expect(new Set(ends).size).toBe(3)
    // Nothing reads them: the feed follows the manifest (and the batches past it).
    const fresh = new SessionStore({ store, checkpointEvery: 4 })
    expect((await fresh.readEvents(ref, 0, 100_000)).events.map((x) => x.line.event)).toEqual(
      events,
    )
    // The next rollup that lands starts again from the manifest in force; the orphans stay …
    const done = threadCompleted('thread-1', turn)
    await fresh.commit(await fresh.open(ref), { events: [done] })
    const after = await manifestOf(store, fresh)
    expect(after.rolled_through).toBe(events.length + 1)
    const stillUnlisted = (await parts()).filter(([f, e]) => !listed(after).has(`${f}-${e}`))
    expect(stillUnlisted).toEqual(unlisted)
    await expectFilesMatch(store, ref.sessionId, [...events, done])
    // … until the session is deleted with its whole folder.
    await deleteSessionFolder(store, keys.root, 't1/.turnline/pointer')
    expect((await listAll(store, keys.root)).objects).toEqual([])
  })
})
