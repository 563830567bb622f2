import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { coordinatorId } from '../../src/core/engine/with-lease.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { gate } from '../support/gate.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'

/**
 * `DELETE /v1/sessions/:id` on the real engine (memory adapters): everything of the session
 * goes, reads and listings answer as for a session that never was, a deletion cut short midway
 * is finished by the next call, a running turn refuses it, and another tenant cannot.
 */

/** The memory store whose `failAt`-th delete from now on throws, as a process dying there. */
function dyingDeletes(inner: ObjectStore) {
  let left = 0
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      if (name === 'delete') {
        return async (key: string) => {
          left -= 1
          if (left === 0) throw new Error('the process died here')
          return target.delete(key)
        }
      }
      const value = Reflect.get(target, name, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return { store, dieAt: (n: number) => (left = n) }
}

/** What a deleted session leaves: its deleted-session marker alone (no data of it). */
const MARKER_ONLY = [expect.stringMatching(/\/log\/\d{10}\.json$/)]

const notFound = (promise: Promise<unknown>) =>
  promise.then(
    () => 'answered',
    (error: unknown) => (isTurnlineError(error, 'not_found') ? 'not_found' : String(error)),
  )

async function sessionWithData(coordinator?: MemoryCoordinator) {
  const memory = new MemoryObjectStore()
  const dying = dyingDeletes(memory)
  const engine = startScriptedEngine({
    store: dying.store,
    ...(coordinator ? { coordinator } : {}),
  })
  const { service, model, deps } = engine
  const { session_id: id } = await service.createSession('t1', { workspace: 'ws' })
  for (const text of ['first answer', 'second answer']) {
    model.enqueue({ text })
    await service.stepTurn('t1', id, { input: `say ${text}` })
  }
  await service.enqueueIntent('t1', id, { text: 'a pending follow-up' })
  const keysOf = async () =>
    (await listAll(memory, '')).objects.map(({ key }) => key).filter((key) => key.includes(id))
  return { engine, service, deps, id, memory, dying, keysOf }
}

describe('deleting a session', () => {
  it('erases its objects and coordinator state; every read is 404, no listing names it', async () => {
    const { service, deps, id, keysOf } = await sessionWithData()
    expect((await keysOf()).length).toBeGreaterThan(3)
    const ref = { tenant: 't1', workspace: 'ws', sessionId: id }
    expect(await deps.coordinator.pendingIntents(coordinatorId(ref))).toHaveLength(1)

    await service.deleteSession('t1', id)

    expect(await keysOf()).toEqual(MARKER_ONLY)
    expect(await deps.coordinator.pendingIntents(coordinatorId(ref))).toEqual([])
    expect(await deps.coordinator.getTip(coordinatorId(ref))).toBeNull()
    expect(await notFound(service.getSession('t1', id))).toBe('not_found')
    expect(await notFound(service.readEvents('t1', id, -1, 100))).toBe('not_found')
    expect(await notFound(service.stepTurn('t1', id, { input: 'again' }))).toBe('not_found')
    expect(await notFound(service.deleteSession('t1', id))).toBe('not_found')
    const listed = await service.listSessions('t1', {
      workspace: 'ws',
      limit: 50,
      order: 'newest',
    })
    expect(listed.sessions).toEqual([])
  })

  it('leaves no trace in a paged listing: no empty page, no cursor that names it', async () => {
    const { engine, service, id } = await sessionWithData()
    const { session_id: kept } = await engine.service.createSession('t1', { workspace: 'ws' })
    await service.deleteSession('t1', id)
    // A cursor is base64url JSON made of the last entry of a page: decoded, it must not hold the
    // deleted session's id, whichever order is asked and however small the page.
    const decoded = (cursor: string | undefined) =>
      cursor === undefined ? '' : Buffer.from(cursor, 'base64url').toString('utf8')
    for (const order of ['oldest', 'newest'] as const) {
      const seen: string[] = []
      let cursor: string | undefined
      for (let page = 0; page < 5; page += 1) {
        const listed = await service.listSessions('t1', {
          workspace: 'ws',
          limit: 1,
          order,
          ...(cursor ? { cursor } : {}),
        })
        expect(decoded(listed.cursor), order).not.toContain(id)
        if (listed.cursor !== undefined) expect(listed.sessions, order).toHaveLength(1)
        seen.push(...listed.sessions.map((s) => s.session_id))
        cursor = listed.cursor
        if (cursor === undefined) break
      }
      expect(seen, order).toEqual([kept])
    }
  })

  it('is finished by the next call when the first dies midway', async () => {
    const { service, id, keysOf, dying } = await sessionWithData()
    const before = (await keysOf()).length
    dying.dieAt(3)
    await expect(service.deleteSession('t1', id)).rejects.toThrow('the process died here')
    // Cut short after two deletions (the manifest first; the marker was added before): no
    // listing names it any more, and the id pointer, deleted last, still leads the next call
    // to what is left.
    expect((await keysOf()).length).toBe(before + 1 - 2)
    const listed = await service.listSessions('t1', { workspace: 'ws', limit: 50, order: 'newest' })
    expect(listed.sessions).toEqual([])
    await service.deleteSession('t1', id)
    expect(await keysOf()).toEqual(MARKER_ONLY)
  })

  it('is refused with session_busy while a turn runs, and works once it ended', async () => {
    const { engine, service, id, keysOf } = await sessionWithData()
    const hold = gate()
    engine.model.enqueue({ text: 'a slow answer', hold: hold.promise })
    const running = service.stepTurn('t1', id, { input: 'take your time' })
    await engine.model.requested(3)
    const refused = await service.deleteSession('t1', id).catch((error: unknown) => error)
    expect(isTurnlineError(refused, 'session_busy')).toBe(true)
    hold.open()
    expect((await running).status).toBe('completed')
    expect((await service.getSession('t1', id)).session_id).toBe(id)
    await service.deleteSession('t1', id)
    expect(await keysOf()).toEqual(MARKER_ONLY)
  })

  it("is tenant-scoped: another tenant's call is 404 and deletes nothing", async () => {
    const { service, id, keysOf } = await sessionWithData()
    const before = await keysOf()
    expect(await notFound(service.deleteSession('t2', id))).toBe('not_found')
    expect(await keysOf()).toEqual(before)
    expect((await service.getSession('t1', id)).session_id).toBe(id)
  })

  it('fences a turn that lost its lease: it cannot write a batch after the delete', async () => {
    // The coordinator's clock jumps past the lease while the turn waits for its model: the
    // lease lapsed (a paused process), so the delete takes it and erases the session.
    let skew = 0
    const coordinator = new MemoryCoordinator({ clock: { now: () => Date.now() + skew } })
    const { engine, service, id, keysOf } = await sessionWithData(coordinator)
    const hold = gate()
    engine.model.enqueue({ text: 'an answer after the delete', hold: hold.promise })
    const running = service.stepTurn('t1', id, { input: 'take your time' }).then(
      (turn) => turn.status,
      (error: unknown) => (isTurnlineError(error) ? error.code : String(error)),
    )
    await engine.model.requested(3)
    skew = 10 * 60_000
    await service.deleteSession('t1', id)
    const left = await keysOf()
    hold.open()
    // Its commit meets the delete's marker at the next batch number: refused, nothing written.
    expect(await running).toBe('conflict')
    expect(await keysOf()).toEqual(left)
    expect(left).toEqual(MARKER_ONLY)
    expect(await notFound(service.getSession('t1', id))).toBe('not_found')
    expect(await notFound(service.readEvents('t1', id, -1, 100))).toBe('not_found')
  })
})
