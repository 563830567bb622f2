import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { HISTORY_ARCHIVES_KEPT } from '../../src/core/compaction/archive-retention.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { boundaries, committed, isSummaryRequest } from '../support/compaction-engine.ts'
import { crashingObjectStore } from '../support/crashing-object-store.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * Compaction archives on the real stores (the fs store, S3 on moto). Which archives count toward
 * the newest 10 kept is what committed compactions wrote: the archive and envelope a compaction
 * left when its process died before its commit push none of them out. And removing the oldest
 * costs no LIST of the session's `history/`, which holds every envelope the session ever kept.
 */
const services = requireServices()
let dir: string
let bucket: Awaited<ReturnType<typeof createTestBucket>>

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-archive-stores-'))
  bucket = await createTestBucket(services.s3, 'archives')
})

afterAll(async () => {
  await bucket?.destroy()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const stores: [string, () => ObjectStore][] = [
  ['fs', () => new FsObjectStore({ root: join(dir, 'store') })],
  ['s3 (moto)', () => bucket.store('prefix')],
]

/** The store, recording the keys every LIST returned. */
function listing(inner: ObjectStore): { store: ObjectStore; listed: string[] } {
  const listed: string[] = []
  const append = inner.append?.bind(inner)
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    put: (key, body, options) => inner.put(key, body, options),
    delete: (key) => inner.delete(key),
    list: async (prefix, options) => {
      const page = await inner.list(prefix, options)
      listed.push(...page.objects.map((o) => o.key), ...page.prefixes)
      return page
    },
    ...(append ? { append } : {}),
  }
  return { store, listed }
}

function engineOn(store: ObjectStore) {
  const engine = startScriptedEngine({ store })
  engine.model.respond((request) =>
    isSummaryRequest(request) ? { text: 'The user ran tasks.' } : { text: 'done' },
  )
  return engine
}

/** The envelopes of 1,100 earlier compactions, as a long session's `history/` holds them. */
async function plantEnvelopes(store: ObjectStore, root: string, sid: string): Promise<void> {
  const body = new TextEncoder().encode('{}')
  const keys = Array.from(
    { length: 1_100 },
    (_, i) => `${root}history/${sid}_0000_20260101T000000Z-${i + 9}.memory.json`,
  )
  for (let at = 0; at < keys.length; at += 50) {
    await Promise.all(keys.slice(at, at + 50).map((key) => store.put(key, body)))
  }
}

/** A session on `store`, and a turn then a manual compaction, committed, its archive noted. */
async function compactingSession(store: ObjectStore) {
  const engine = engineOn(store)
  const { session_id: sid } = await engine.service.createSession('t1', {})
  const root = engine.deps.sessions.keys({
    tenant: 't1',
    workspace: 'default',
    sessionId: sid,
  }).root
  const archives: string[] = []
  const compactAfterATurn = async () => {
    const turn = await engine.service.stepTurn('t1', sid, { input: 'a task' })
    expect(turn.status).toBe('completed')
    const [boundary] = boundaries((await engine.service.compact('t1', sid)).events)
    archives.push(boundary?.history_artifact_path ?? '')
  }
  return { engine, sid, root, archives, compactAfterATurn }
}

describe.each(stores)('compaction archives on the %s store', (_name, open) => {
  it('keeps the newest 10 committed, whatever a crashed compaction left', async () => {
    const inner = open()
    const { engine, sid, root, archives, compactAfterATurn } = await compactingSession(inner)
    for (let n = 1; n <= HISTORY_ARCHIVES_KEPT; n++) await compactAfterATurn()

    // Another process compacts and dies once it has written the archive and its envelope.
    const dying = crashingObjectStore(inner, (key) => key.endsWith('.memory.json'), 'after')
    const victim = engineOn(dying.store)
    await expect(victim.service.compact('t1', sid)).rejects.toThrow(/crash after write/)
    const leftKeys = (await inner.list(`${root}history/`, {})).objects.map((o) => o.key)
    const left = leftKeys.filter((key) => key.endsWith('.jsonl') && !archives.includes(key))
    expect(left).toHaveLength(1)

    await compactAfterATurn()
    await compactAfterATurn()
    // The newest 10 committed archives are all there, and none older.
    const newest = archives.slice(-HISTORY_ARCHIVES_KEPT)
    for (const key of newest) expect(await inner.get(key), key).not.toBeNull()
    for (const key of archives.slice(0, -HISTORY_ARCHIVES_KEPT)) {
      expect(await inner.get(key), key).toBeNull()
    }
    const { state } = await committed(engine.deps, 't1', sid)
    const prefix = `${root}history/${sid}_`
    expect(state.compaction_archives).toEqual(newest.map((key) => key.slice(prefix.length)))
  })

  it('removes the oldest without listing the envelopes of every earlier compaction', async () => {
    const inner = open()
    const { store, listed } = listing(inner)
    const { sid, root, archives, compactAfterATurn } = await compactingSession(store)
    for (let n = 1; n <= HISTORY_ARCHIVES_KEPT; n++) await compactAfterATurn()
    await plantEnvelopes(inner, root, sid)
    listed.length = 0
    await compactAfterATurn()
    await compactAfterATurn()
    // No LIST went through `history/`: its envelopes are never read to choose what goes.
    expect(listed.filter((key) => key.startsWith(`${root}history/`))).toEqual([])
    expect(await inner.get(archives[0] ?? '')).toBeNull()
    expect(await inner.get(archives[1] ?? '')).toBeNull()
    expect(await inner.get(archives[2] ?? '')).not.toBeNull()
  })
})
