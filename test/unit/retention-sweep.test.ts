import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { sweepRetention } from '../../src/store/retention-sweep.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadCompleted, threadStarted } from '../support/sample-events.ts'

const DAY = 86_400_000

async function seed(store: ObjectStore, at: number, prefix = '') {
  const sessions = new SessionStore({ store, clock: { now: () => at }, prefix })
  const make = async (tenant: string, workspace: string, id: string, close: boolean) => {
    const ref = { tenant, workspace, sessionId: id }
    await sessions.create(ref, id, { events: [threadStarted(id)] })
    if (close) await sessions.commit(await sessions.open(ref), { events: [threadCompleted(id, 0)] })
  }
  await make('acme', 'web', 'old-closed', true)
  await make('acme', 'web', 'old-active', false)
  await make('acme', 'api', 'old-closed-2', true)
  await make('globex', 'main', 'old-closed-3', true)
}

describe('sweepRetention', () => {
  it('applies the policy in every workspace of every tenant, and leaves everything else', async () => {
    const store = new MemoryObjectStore()
    const start = Date.parse('2026-01-01T00:00:00Z')
    await seed(store, start)
    const sessions = new SessionStore({ store, clock: { now: () => start + 40 * DAY } })
    const fresh = { tenant: 'acme', workspace: 'web', sessionId: 'fresh-closed' }
    await sessions.create(fresh, 'fresh-closed', { events: [threadStarted('fresh-closed')] })
    await sessions.commit(await sessions.open(fresh), { events: [threadCompleted('x', 0)] })
    // The session pointers and stray files are not workspaces' sessions.
    await store.put('acme/.turnline/sessions/old-closed.json', new TextEncoder().encode('{}'))
    await store.put('acme/web/notes.txt', new TextEncoder().encode('keep'))
    await store.put('README.txt', new TextEncoder().encode('keep'))

    const result = await sweepRetention(store, { now: start + 40 * DAY })
    expect(result.workspaces).toBe(3)
    expect(result.failed).toEqual([])
    expect(result.deleted).toEqual([
      { tenant: 'acme', workspace: 'api', sessions: ['old-closed-2'] },
      { tenant: 'acme', workspace: 'web', sessions: ['old-closed'] },
      { tenant: 'globex', workspace: 'main', sessions: ['old-closed-3'] },
    ])
    const keys = (await store.list('', { limit: 1000 })).objects.map((o) => o.key)
    expect(keys.some((k) => k.includes('/old-closed/'))).toBe(false)
    expect(keys.some((k) => k.includes('/old-active/manifest.json'))).toBe(true)
    expect(keys.some((k) => k.includes('/fresh-closed/manifest.json'))).toBe(true)
    expect(keys).toEqual(
      expect.arrayContaining([
        'acme/.turnline/sessions/old-closed.json',
        'acme/web/notes.txt',
        'README.txt',
      ]),
    )
  })

  it('deletes nothing while sessions are young, and honours a key prefix', async () => {
    const store = new MemoryObjectStore()
    const start = Date.parse('2026-01-01T00:00:00Z')
    await seed(store, start, 'prod')
    expect((await sweepRetention(store, { now: start + DAY, prefix: 'prod' })).deleted).toEqual([])
    const late = await sweepRetention(store, { now: start + 40 * DAY, prefix: 'prod/' })
    expect(late.deleted.flatMap((d) => d.sessions).sort()).toEqual([
      'old-closed',
      'old-closed-2',
      'old-closed-3',
    ])
    // Without the prefix the sessions are not where the sweep looks: nothing goes.
    expect((await sweepRetention(store, { now: start + 40 * DAY })).deleted).toEqual([])
  })
})
