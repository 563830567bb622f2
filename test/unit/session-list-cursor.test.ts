import { describe, expect, it } from 'vitest'
import { MemoryActivityIndex } from '../../adapters/memory/memory-activity-index.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { type ListOrder, listByActivity } from '../../src/store/activity-listing.ts'
import { decodeListCursor, encodeListCursor } from '../../src/store/session-list-cursor.ts'
import { SessionLocator } from '../../src/store/session-locator.ts'
import { SessionStore } from '../../src/store/session-store.ts'

/**
 * Paging GET /v1/sessions through the activity index with its opaque cursors: a walk lists the
 * order as it stood at its first page, so sessions touched while it pages are neither lost nor
 * listed twice.
 */
const scope = { tenant: 't', workspace: 'w' }

async function setUp(count: number) {
  const objects = new MemoryObjectStore()
  const sessions = new SessionStore({ store: objects })
  const locator = new SessionLocator(objects, '')
  const index = new MemoryActivityIndex()
  const ids: string[] = []
  for (let n = 0; n < count; n++) {
    const id = `session-${String(n).padStart(4, '0')}`
    const ref = { ...scope, sessionId: id }
    await locator.register(ref, new Date(1_000 + n).toISOString())
    await sessions.create(ref, id, {
      events: [{ type: 'thread.started', thread_id: id }],
      state: {},
    })
    index.touch({ ...ref, atMs: 1_000 + n })
    ids.push(id)
  }
  let now = 10_000
  const page = (options: { cursor?: string; limit: number; order: ListOrder }) =>
    listByActivity({ objects, prefix: '', index, nowMs: now }, scope, options)
  const touch = (id: string) => index.touch({ ...scope, sessionId: id, atMs: ++now })
  return { objects, sessions, index, ids, page, touch }
}

type Page = Awaited<ReturnType<Awaited<ReturnType<typeof setUp>>['page']>>

/** Walks every page; `between` runs after each page (it may touch sessions). */
async function walk(
  page: (o: { cursor?: string; limit: number; order: ListOrder }) => Promise<Page>,
  limit: number,
  order: ListOrder,
  between: (pageNumber: number) => void = () => undefined,
): Promise<string[]> {
  const seen: string[] = []
  let cursor: string | undefined
  for (let n = 0; n < 1000; n++) {
    const got = await page({ limit, order, ...(cursor ? { cursor } : {}) })
    expect(got.sessions.length).toBeLessThanOrEqual(limit)
    seen.push(...got.sessions.map((s) => s.manifest.session_id))
    cursor = got.cursor
    if (!cursor) return seen
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    between(n)
  }
  throw new Error('the walk never ended')
}

describe('session list by last activity', () => {
  for (const limit of [1, 3, 50]) {
    it(`lists every session once, latest activity first, ${limit} per page`, async () => {
      const { page, ids, touch } = await setUp(7)
      touch('session-0002')
      const expected = ['session-0002', ...[...ids].reverse().filter((id) => id !== 'session-0002')]
      expect(await walk(page, limit, 'newest')).toEqual(expected)
      expect(await walk(page, limit, 'oldest')).toEqual([...expected].reverse())
    })
  }

  it('a session touched during a walk keeps its place: never lost, never twice', async () => {
    const { page, ids, touch } = await setUp(30)
    const newestFirst = [...ids].reverse()
    // After each page, touch one session not listed yet and one listed already.
    const seen = await walk(page, 4, 'newest', (n) => {
      touch(newestFirst[4 * (n + 1) + 2] ?? 'session-0000')
      touch(newestFirst[n] ?? 'session-0000')
    })
    expect(seen).toEqual(newestFirst)
    const oldest = await walk(page, 4, 'oldest', (n) => touch(`session-00${10 + n}`))
    expect([...oldest].sort()).toEqual(ids)
    expect(new Set(oldest).size).toBe(ids.length)
  })

  it('reaches every one of 260 sessions exactly once while sessions move', async () => {
    const { page, ids, touch } = await setUp(260)
    let k = 0
    const seen = await walk(page, 50, 'newest', () => {
      for (let i = 0; i < 20; i++) touch(ids[(k++ * 37) % ids.length] ?? 'session-0000')
    })
    expect(seen.length).toBe(260)
    expect([...seen].sort()).toEqual(ids)
    // The next walk starts from the order as it is now: the last touched first.
    const next = await page({ limit: 1, order: 'newest' })
    expect(next.sessions[0]?.manifest.session_id).toBe(ids[((k - 1) * 37) % ids.length])
  })

  it('sessions created during a walk wait for the next walk; deleted ones leave', async () => {
    const { page, index, objects } = await setUp(6)
    const first = await page({ limit: 2, order: 'newest' })
    index.touch({ ...scope, sessionId: 'session-late', atMs: 99_999 })
    await index.dropActivity(scope, ['session-0003'])
    const rest = await page({ limit: 10, order: 'newest', cursor: first.cursor ?? '' })
    const ids = [...first.sessions, ...rest.sessions].map((s) => s.manifest.session_id)
    expect(ids).toEqual([
      'session-0005',
      'session-0004',
      'session-0002',
      'session-0001',
      'session-0000',
    ])
    // A session whose folder is gone is dropped from the index by the listing that meets it.
    await objects.delete('t/w/.vtcode/sessions/session-0004/manifest.json')
    const again = await page({ limit: 10, order: 'newest' })
    expect(again.sessions.map((s) => s.manifest.session_id)).not.toContain('session-0004')
    expect(await index.missingActivity(scope, ['session-0004'])).toEqual(['session-0004'])
  })

  it('fills in sessions the index lacks (older than it, or a restart), by their last commit', async () => {
    const { objects, ids } = await setUp(5)
    // A fresh index (the process restarted): the first page fills it from the store.
    const index = new MemoryActivityIndex()
    const listed = await listByActivity({ objects, prefix: '', index, nowMs: 50_000 }, scope, {
      limit: 10,
      order: 'oldest',
    })
    expect(listed.sessions.map((s) => s.manifest.session_id)).toEqual(ids)
    expect(await index.missingActivity(scope, ids)).toEqual([])
    const scan = await index.scanActivity({ ...scope, direction: 'desc', limit: 1 })
    expect(scan.filledAtMs).toBe(50_000)
  })

  it('a cursor continues the walk it was made in, and no other', async () => {
    const { page } = await setUp(3)
    const newest = await page({ limit: 1, order: 'newest' })
    const oldest = await page({ limit: 1, order: 'oldest' })
    if (!newest.cursor || !oldest.cursor) throw new Error('expected cursors')
    const crossed = [
      await page({ limit: 1, order: 'oldest', cursor: newest.cursor }).catch((e: unknown) => e),
      await page({ limit: 1, order: 'newest', cursor: oldest.cursor }).catch((e: unknown) => e),
    ]
    for (const outcome of crossed) expect(isTurnlineError(outcome, 'invalid_input')).toBe(true)
    expect(() => decodeListCursor(newest.cursor ?? '', 'w2', 'newest')).toThrow(/another workspace/)
  })

  it('refuses cursors it did not make, and cursors of the order by creation', () => {
    const good = encodeListCursor({
      workspace: 'w',
      order: 'newest',
      asOf: 5,
      after: { position: 4, sessionId: 'session-1' },
    })
    expect(decodeListCursor(good, 'w', 'newest').after).toEqual({
      position: 4,
      sessionId: 'session-1',
    })
    const bad = [
      Buffer.from('{"v":1,"w":"w","a":"abc","f":true,"o":"n"}').toString('base64url'),
      Buffer.from('{"v":2,"w":"w","o":"n","t":5,"p":4,"a":"../x"}').toString('base64url'),
      Buffer.from('{"v":2,"w":"w","o":"n","t":5,"p":9,"a":"x"}').toString('base64url'),
      Buffer.from('{"v":2,"w":"w","o":"x","t":5,"p":4,"a":"x"}').toString('base64url'),
      Buffer.from('{"v":2,"w":"w","o":"n","t":"5","p":4,"a":"x"}').toString('base64url'),
      Buffer.from('[1]').toString('base64url'),
      `${good}%`,
      'x'.repeat(3000),
    ]
    for (const forged of bad) {
      let outcome: unknown
      try {
        decodeListCursor(forged, 'w', 'newest')
      } catch (error) {
        outcome = error
      }
      expect(isTurnlineError(outcome, 'invalid_input'), forged).toBe(true)
    }
  })
})
