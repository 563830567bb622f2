import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import {
  parseSessionManifest,
  serializeSessionManifest,
} from '../../src/contract/session-manifest.ts'
import type { Clock } from '../../src/ports/clock.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadCompleted, threadStarted, turnEvents } from '../support/sample-events.ts'

const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }
const DAY = 86_400_000

describe('manifest and lifecycle', () => {
  it('is active from thread.started and completed only at thread.completed', async () => {
    const sessions = new SessionStore({ store: new MemoryObjectStore() })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    expect((await sessions.manifest(ref)).status).toBe('active')
    await sessions.commit(await sessions.open(ref), { events: turnEvents(1) })
    expect(await sessions.manifest(ref)).toMatchObject({ status: 'active', turn_count: 1 })
    await sessions.commit(await sessions.open(ref), { events: [threadCompleted('thread-1', 1)] })
    expect(await sessions.manifest(ref)).toMatchObject({ status: 'completed', turn_count: 1 })
  })

  it('never lets the manifest regress', async () => {
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ store })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const stale = await new SessionStore({ store, cacheSize: 0 }).open(ref)
    for (let n = 1; n <= 3; n++)
      await sessions.commit(await sessions.open(ref), { events: turnEvents(n) })
    const keys = sessions.keys(ref)
    const ahead = await sessions.manifest(ref)
    expect(ahead.last_batch).toBe(3)
    const stored = (await store.get(keys.manifest))!.body
    // A writer holding an old view loses at the commit point and writes nothing else.
    await expect(
      new SessionStore({ store, cacheSize: 0 }).commit(stale, { events: turnEvents(9) }),
    ).rejects.toMatchObject({ code: 'conflict' })
    expect((await store.get(keys.manifest))!.body).toEqual(stored)
    expect(await new SessionStore({ store }).manifest(ref)).toEqual(ahead)
    // A lagging manifest (writer stopped after its commit point) is repaired, not trusted.
    await store.put(
      keys.manifest,
      new TextEncoder().encode(serializeSessionManifest({ ...ahead, last_batch: 1, last_seq: 5 })),
    )
    const repaired = await new SessionStore({ store }).manifest(ref)
    expect(repaired.last_batch).toBe(3)
    expect(repaired.last_seq).toBe(ahead.last_seq)
  })

  it('refuses to create a session twice', async () => {
    const sessions = new SessionStore({ store: new MemoryObjectStore() })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    await expect(
      sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] }),
    ).rejects.toMatchObject({ code: 'conflict' })
  })
})

describe('retention', () => {
  it('keeps 50 closed sessions per workspace and drops closed ones older than 30 days', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z')
    const clock: Clock = { now: () => now }
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ store, clock })
    const make = async (id: string, close: boolean) => {
      const r = { ...ref, sessionId: id }
      await sessions.create(r, id, { events: [threadStarted(id)] })
      if (close) await sessions.commit(await sessions.open(r), { events: [threadCompleted(id, 0)] })
      now += 1000
    }
    await make('old-closed', true)
    await make('old-active', false)
    now += 40 * DAY
    for (let i = 0; i < 55; i++) await make(`closed-${String(i).padStart(2, '0')}`, true)
    await make('current', true)
    await make('active-new', false)
    // things that are not session folders stay
    const root = 't1/w1/.vtcode/sessions/'
    await store.put(`${root}notes.txt`, new TextEncoder().encode('keep me'))
    await store.put(`${root}not-a-session/file.txt`, new TextEncoder().encode('keep me'))
    await store.put(`${root}broken/manifest.json`, new TextEncoder().encode('{'))

    const result = await sessions.retention('t1', 'w1', { preserve: ['current'] })
    expect(result.deleted).toContain('old-closed')
    expect(result.deleted).toEqual(
      expect.arrayContaining(['closed-00', 'closed-01', 'closed-02', 'closed-03', 'closed-04']),
    )
    expect(result.deleted).toHaveLength(6)
    expect(result.kept).toBe(50)
    const keys = (await store.list(root, { limit: 1000 })).objects.map((o) => o.key)
    expect(keys.some((k) => k.startsWith(`${root}old-closed/`))).toBe(false)
    expect(keys.some((k) => k.startsWith(`${root}closed-04/`))).toBe(false)
    for (const kept of ['old-active', 'current', 'active-new', 'closed-05', 'closed-54']) {
      expect(
        keys.some((k) => k.startsWith(`${root}${kept}/manifest.json`)),
        kept,
      ).toBe(true)
    }
    expect(keys).toEqual(
      expect.arrayContaining([
        `${root}notes.txt`,
        `${root}not-a-session/file.txt`,
        `${root}broken/manifest.json`,
      ]),
    )
  })

  it('builds deletion keys from the folder listing, never from a manifest id', async () => {
    const now = Date.parse('2026-06-01T00:00:00Z')
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ store, clock: { now: () => now } })
    const victim = { ...ref, sessionId: 'victim' }
    await sessions.create(victim, 'victim', { events: [threadStarted('victim')] })
    const bystander = { ...ref, sessionId: 'bystander' }
    await sessions.create(bystander, 'bystander', { events: [threadStarted('bystander')] })
    // A closed, ancient session whose manifest claims another id.
    const keys = sessions.keys(victim)
    const m = parseSessionManifest((await store.get(keys.manifest))!.body)
    await store.put(
      keys.manifest,
      new TextEncoder().encode(
        serializeSessionManifest({
          ...m,
          session_id: 'bystander',
          status: 'completed',
          updated_at: '2020-01-01T00:00:00Z',
        }),
      ),
    )
    const result = await sessions.retention('t1', 'w1')
    expect(result.deleted).toEqual(['victim'])
    expect(await store.get(sessions.keys(bystander).manifest)).not.toBeNull()
  })
})
