import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { SessionStore } from '../../src/store/session-store.ts'

/** Paging GET /v1/sessions with the store's opaque cursors, over ids that sort awkwardly. */
const IDS = ['abc', 'abc-1', 'abc.x', 'abc0', 'abc0.b', 'abc_z', 'abcA', 'b']

async function storeWith(ids: readonly string[]): Promise<SessionStore> {
  const objects = new MemoryObjectStore()
  const sessions = new SessionStore({ store: objects })
  for (const id of ids) {
    await sessions.create({ tenant: 't', workspace: 'w', sessionId: id }, id, {
      events: [{ type: 'thread.started', thread_id: id }],
      state: {},
    })
  }
  // A stray file in the sessions folder must not stop the paging either.
  await objects.put('t/w/.vtcode/sessions/notes.txt', new Uint8Array([1]))
  return sessions
}

describe('session list cursor', () => {
  for (const limit of [1, 2, 3]) {
    it(`lists every session exactly once, ${limit} per page`, async () => {
      const sessions = await storeWith(IDS)
      const seen: string[] = []
      let cursor: string | undefined
      for (let pages = 0; pages < 20; pages++) {
        const page = await sessions.list('t', 'w', { limit, ...(cursor ? { cursor } : {}) })
        seen.push(...page.sessions.map((m) => m.session_id))
        cursor = page.cursor
        if (!cursor) break
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
      }
      expect(cursor).toBeUndefined()
      expect([...seen].sort()).toEqual([...IDS].sort())
    })
  }

  for (const limit of [1, 2, 3, 50]) {
    it(`lists newest first: every session exactly once, by id descending, ${limit} per page`, async () => {
      const sessions = await storeWith(IDS)
      const seen: string[] = []
      let cursor: string | undefined
      for (let pages = 0; pages < 20; pages++) {
        const page = await sessions.list('t', 'w', {
          limit,
          order: 'newest',
          ...(cursor ? { cursor } : {}),
        })
        expect(page.sessions.length).toBeLessThanOrEqual(limit)
        seen.push(...page.sessions.map((m) => m.session_id))
        cursor = page.cursor
        if (!cursor) break
      }
      expect(cursor).toBeUndefined()
      expect(seen).toEqual([...IDS].sort().reverse())
    })
  }

  it('a cursor continues the order it was made in, and no other', async () => {
    const sessions = await storeWith(IDS)
    const newest = await sessions.list('t', 'w', { limit: 1, order: 'newest' })
    const oldest = await sessions.list('t', 'w', { limit: 1, order: 'oldest' })
    expect(newest.sessions[0]?.session_id).toBe('b')
    expect(oldest.sessions[0]?.session_id).toBe('abc-1') // key order: 'abc-1/' < 'abc/'
    if (!newest.cursor || !oldest.cursor) throw new Error('expected cursors')
    const crossed = [
      await sessions.list('t', 'w', { cursor: newest.cursor, order: 'oldest' }).catch((e) => e),
      await sessions.list('t', 'w', { cursor: oldest.cursor, order: 'newest' }).catch((e) => e),
      await sessions.list('t', 'w2', { cursor: newest.cursor, order: 'newest' }).catch((e) => e),
    ]
    for (const outcome of crossed) expect(isTurnlineError(outcome, 'invalid_input')).toBe(true)
  })

  it('refuses cursors it did not make, and cursors of another workspace', async () => {
    const sessions = await storeWith(IDS)
    const { cursor } = await sessions.list('t', 'w', { limit: 1 })
    if (!cursor) throw new Error('expected a cursor')
    const bad = [
      'o:t/w/.vtcode/sessions/abc',
      Buffer.from('{"v":1,"w":"w","a":"../x","f":true}').toString('base64url'),
      Buffer.from('{"v":1,"w":"w","a":"a/b","f":false}').toString('base64url'),
      Buffer.from('[1]').toString('base64url'),
      `${cursor}%`,
    ]
    for (const forged of bad) {
      const outcome = await sessions.list('t', 'w', { cursor: forged }).catch((e: unknown) => e)
      expect(isTurnlineError(outcome, 'invalid_input'), forged).toBe(true)
    }
    const elsewhere = await sessions.list('t', 'w2', { cursor }).catch((e: unknown) => e)
    expect(isTurnlineError(elsewhere, 'invalid_input')).toBe(true)
  })
})
