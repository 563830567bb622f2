import { describe, expect, it, vi } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { gate as opened, settledSoon } from '../support/gate.ts'
import { type ScriptedEngine, startScriptedEngine } from '../support/scripted-engine.ts'
import { readSessionFiles } from '../support/session-files.ts'

/**
 * In a process that runs on after it answers (`deferMaintenance`, the Node server), a turn
 * answers once its final batch is committed; its checkpoint, rollup and manifest finish after.
 * The session's next commit in the process settles them first, a failure of them is logged when
 * it happens and loses nothing, a deletion by another process meanwhile leaves nothing of it,
 * and the session's end (its manifest) is still awaited. These
 * engines checkpoint after every turn, so every turn has all of that maintenance.
 */
const DEFERRED = { checkpointEvery: 1, deferMaintenance: true }

/** Holds (or fails) the PUTs of manifests and checkpoints while `hold` is set; logs every PUT. */
function gatedMaintenance(inner: ObjectStore) {
  const puts: string[] = []
  let gate: { promise: Promise<void>; fail: boolean } | undefined
  let held = 0
  const maintenance = (key: string) => key.endsWith('/manifest.json') || key.includes('/state/')
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    async put(key, body, options) {
      const current = gate
      if (current && maintenance(key)) {
        held++
        await current.promise
        if (current.fail) throw new Error('store unavailable (simulated)')
      }
      puts.push(key.split('/').slice(-2).join('/'))
      return inner.put(key, body, options)
    },
  }
  return {
    store,
    puts,
    held: () => held,
    hold(fail = false) {
      const { promise, open } = opened()
      gate = { promise, fail }
      held = 0
      return () => {
        gate = undefined
        open()
      }
    },
  }
}

async function storedManifest(store: ObjectStore, sessionId: string) {
  const { manifest } = await readSessionFiles(store, sessionId)
  if (!manifest) throw new Error(`no manifest for ${sessionId}`)
  return manifest
}

/** Every event of the session, in order: dense seqs and `turns` turns, none twice. */
async function expectWhole(engine: ScriptedEngine, sessionId: string, turns: number) {
  const page = await engine.service.readEvents('t1', sessionId, -1, 1000)
  expect(page.events.map((e) => e.seq)).toEqual(page.events.map((_, i) => i))
  const started = page.events.filter((e) => e.line.event.type === 'turn.started')
  expect(started).toHaveLength(turns)
  return page
}

/** A session whose first turn has answered with its checkpoint and manifest held. */
async function answeredWithMaintenanceHeld() {
  const inner = new MemoryObjectStore()
  const gate = gatedMaintenance(inner)
  const engine = startScriptedEngine({ store: gate.store, sessions: DEFERRED })
  const { session_id } = await engine.service.createSession('t1', {})
  const release = gate.hold()
  engine.model.enqueue({ text: 'one' })
  await engine.service.stepTurn('t1', session_id, { input: 'one' }, {})
  return { inner, gate, engine, session_id, release }
}

/** Of a deleted session only its deleted-session marker stays (delete-fence.ts). */
async function expectOnlyTheMarker(store: ObjectStore, sessionId: string) {
  const { objects } = await listAll(store, '')
  const left = objects.map((o) => o.key).filter((key) => key.includes(sessionId))
  expect(left).toEqual([expect.stringMatching(/\/log\/\d{10}\.json$/)])
}

describe('maintenance after the answer', () => {
  it('answers before the maintenance, and the next commit settles it first', async () => {
    const inner = new MemoryObjectStore()
    const gate = gatedMaintenance(inner)
    const engine = startScriptedEngine({ store: gate.store, sessions: DEFERRED })
    const { session_id } = await engine.service.createSession('t1', {})
    const before = await storedManifest(inner, session_id)
    const release = gate.hold()
    engine.model.enqueue({ text: 'one' })
    // Answered while the checkpoint (and so the manifest) is held: never, were it awaited.
    const one = engine.service.stepTurn('t1', session_id, { input: 'one' }, {})
    let answered = false
    void one.then(() => {
      answered = true
    })
    await vi.waitFor(() => expect(answered).toBe(true), { timeout: 5000, interval: 5 })
    expect((await one).status).toBe('completed')
    expect(gate.held()).toBeGreaterThan(0)
    expect((await storedManifest(inner, session_id)).last_batch).toBe(before.last_batch)

    // The next turn's commit waits for it: no batch is written while it is held.
    engine.model.enqueue({ text: 'two' })
    const batches = gate.puts.filter((p) => p.startsWith('log/')).length
    const two = engine.service.stepTurn('t1', session_id, { input: 'two' }, {})
    expect(await settledSoon(two)).toBe(false)
    expect(gate.puts.filter((p) => p.startsWith('log/'))).toHaveLength(batches)
    const atRelease = gate.puts.length
    release()
    expect((await two).status).toBe('completed')
    // Turn one's manifest is written before turn two's batch.
    const after = gate.puts.slice(atRelease)
    const manifest = after.findIndex((p) => p.endsWith('manifest.json'))
    expect(manifest).toBeGreaterThanOrEqual(0)
    expect(manifest).toBeLessThan(after.findIndex((p) => p.startsWith('log/')))
    await engine.deps.sessions.settled()
    expect((await storedManifest(inner, session_id)).last_seq).toBe((await two).next_seq - 1)
    await expectWhole(engine, session_id, 2)
    expect(engine.logs.filter((l) => String(l.msg).includes('maintenance failed'))).toEqual([])
  })

  it('a failed maintenance is logged once, when it fails, and nothing is lost', async () => {
    const inner = new MemoryObjectStore()
    const gate = gatedMaintenance(inner)
    const engine = startScriptedEngine({ store: gate.store, sessions: DEFERRED })
    const { session_id } = await engine.service.createSession('t1', {})
    const release = gate.hold(true)
    engine.model.enqueue({ text: 'one' })
    const one = await engine.service.stepTurn('t1', session_id, { input: 'one' }, {})
    expect(one.status).toBe('completed')
    const failures = () =>
      engine.logs.filter((l) => String(l.msg).includes('maintenance failed')).map((l) => l.error)
    expect(failures()).toEqual([])
    release()
    await engine.deps.sessions.settled()
    // Logged as it fails, not left for a next turn that may never come.
    await vi.waitFor(() => expect(failures()).toEqual(['Error: store unavailable (simulated)']))
    engine.model.enqueue({ text: 'two' })
    const two = await engine.service.stepTurn('t1', session_id, { input: 'two' }, {})
    expect(two.status).toBe('completed')
    expect(failures()).toEqual(['Error: store unavailable (simulated)'])
    await engine.deps.sessions.settled()
    expect((await storedManifest(inner, session_id)).last_seq).toBe(two.next_seq - 1)
    await expectWhole(engine, session_id, 2)
  })

  it('a process that dies with it running loses nothing: the next one goes on', async () => {
    const inner = new MemoryObjectStore()
    const gate = gatedMaintenance(inner)
    const victim = startScriptedEngine({ store: gate.store, sessions: DEFERRED })
    const { session_id } = await victim.service.createSession('t1', {})
    const release = gate.hold()
    try {
      victim.model.enqueue({ text: 'one' })
      const one = await victim.service.stepTurn('t1', session_id, { input: 'one' }, {})
      expect(one.status).toBe('completed')
      // The process dies here: its turn is answered, its checkpoint and manifest never written.
      const next = startScriptedEngine({ store: inner, sessions: DEFERRED })
      await expectWhole(next, session_id, 1)
      next.model.enqueue({ text: 'two' })
      const two = await next.service.stepTurn('t1', session_id, { input: 'two' }, {})
      expect(two.events[0]?.type).toBe('turn.started')
      await next.deps.sessions.settled()
      expect((await storedManifest(inner, session_id)).last_seq).toBe(two.next_seq - 1)
      await expectWhole(next, session_id, 2)
    } finally {
      release()
    }
  })

  it('a session deleted right after its turn answered is erased after the maintenance', async () => {
    const { inner, gate, engine, session_id, release } = await answeredWithMaintenanceHeld()
    const batches = () => gate.puts.filter((p) => p.startsWith('log/')).length
    const before = batches()
    const deleted = engine.service.deleteSession('t1', session_id)
    // Nothing fenced (the marker is a batch: delete-fence.ts) or erased while it runs.
    expect(await settledSoon(deleted)).toBe(false)
    expect(batches()).toBe(before)
    release()
    await deleted
    await engine.deps.sessions.settled()
    // Only the deleted-session marker stays (delete-fence.ts): no checkpoint, no manifest.
    await expectOnlyTheMarker(inner, session_id)
  })

  it('a session another process deletes while it runs keeps nothing it writes after', async () => {
    const { inner, gate, engine, session_id, release } = await answeredWithMaintenanceHeld()
    await vi.waitFor(() => expect(gate.held()).toBeGreaterThan(0))
    // The lease is released: another process deletes the session while the checkpoint waits.
    await startScriptedEngine({ store: inner }).service.deleteSession('t1', session_id)
    release()
    await engine.deps.sessions.settled()
    // Its checkpoint landed after the deletion listed the folder, and was erased after it.
    expect(gate.puts.some((key) => key.startsWith('state/'))).toBe(true)
    await expectOnlyTheMarker(inner, session_id)
  })

  it('a turn with nothing due after its commit checks for no deletion (no LIST)', async () => {
    const inner = new MemoryObjectStore()
    const lists: string[] = []
    const store: ObjectStore = {
      get: (key) => inner.get(key),
      put: (key, body, options) => inner.put(key, body, options),
      delete: (key) => inner.delete(key),
      list: (prefix, options) => {
        lists.push(prefix)
        return inner.list(prefix, options)
      },
    }
    const sessions = { checkpointEvery: 16, deferMaintenance: true }
    const engine = startScriptedEngine({ store, sessions })
    const { session_id } = await engine.service.createSession('t1', {})
    for (const text of ['one', 'two', 'three']) {
      engine.model.enqueue({ text })
      await engine.service.stepTurn('t1', session_id, { input: text }, {})
      await engine.deps.sessions.settled()
      if (text === 'one') lists.length = 0 // the first turn's own reads aside
    }
    expect(lists).toEqual([])
  })

  it('the session’s end still waits for its manifest', async () => {
    const inner = new MemoryObjectStore()
    const gate = gatedMaintenance(inner)
    const engine = startScriptedEngine({ store: gate.store, sessions: DEFERRED })
    const { session_id } = await engine.service.createSession('t1', {})
    engine.model.enqueue({ text: 'one' })
    await engine.service.stepTurn('t1', session_id, { input: 'one' }, {})
    await engine.deps.sessions.settled()
    const release = gate.hold()
    const end = engine.service.complete('t1', session_id)
    await vi.waitFor(() => expect(gate.held()).toBeGreaterThan(0))
    expect(await settledSoon(end)).toBe(false)
    release()
    const ended = await end
    const manifest = await storedManifest(inner, session_id)
    expect(manifest.status).toBe('completed')
    expect(manifest.last_seq).toBe(ended.next_seq - 1)
  })
})
