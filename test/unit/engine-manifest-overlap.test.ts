import { describe, expect, it, vi } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseSessionManifest } from '../../src/contract/session-manifest.ts'
import type { EndTurnRequest } from '../../src/ports/coordinator.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { echoTool } from '../support/engine-deps.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'
import { testClock } from '../support/test-clock.ts'

/**
 * The manifest write and the coordinator's end of turn run concurrently after the commit point.
 * A turn answers only when both are done; a crash between them, and a manifest write that lands
 * after the lease was released and another writer committed, are recovered without losing,
 * duplicating or regressing anything. The manifest is written on turns that checkpoint (among
 * others), so these engines checkpoint after every turn.
 */
const EVERY_TURN = { checkpointEvery: 1 }

/** Holds every manifest PUT until `release()`; `held()` resolves when the first is waiting. */
function holdingManifests(inner: ObjectStore) {
  let open = false
  let waiting: (() => void)[] = []
  let signalHeld: () => void = () => undefined
  const firstHeld = new Promise<void>((resolve) => {
    signalHeld = resolve
  })
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    async put(key, body, options) {
      if (!open && key.endsWith('/manifest.json')) {
        await new Promise<void>((resolve) => {
          waiting.push(resolve)
          signalHeld()
        })
      }
      return inner.put(key, body, options)
    },
  }
  return {
    store,
    hold: () => {
      open = false
    },
    held: () => firstHeld,
    release: () => {
      open = true
      for (const resolve of waiting) resolve()
      waiting = []
    },
  }
}

/** A memory coordinator that records when endTurn was called and when it finished. */
class WatchedCoordinator extends MemoryCoordinator {
  readonly ended: EndTurnRequest[] = []
  failEndTurn = false
  override async endTurn(request: EndTurnRequest): Promise<void> {
    if (this.failEndTurn) throw new Error('coordinator unreachable (simulated)')
    await super.endTurn(request)
    this.ended.push(request)
  }
}

/** Waits (up to 5 s) until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
  await vi.waitFor(() => expect(done()).toBe(true), { timeout: 5000, interval: 5 })
}

/** Lets every piece of work already started run as far as it can (one macrotask turn). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve))

async function storedManifest(store: ObjectStore, sessionId: string) {
  const { objects } = await listAll(store, '')
  const key = objects.find((o) => o.key.endsWith(`/${sessionId}/manifest.json`))?.key
  const stored = key ? await store.get(key) : undefined
  if (!stored) throw new Error(`no manifest for ${sessionId}`)
  return parseSessionManifest(stored.body)
}

describe('the manifest write overlapped with the end of turn', () => {
  it('overlaps with endTurn, and the turn answers after both', async () => {
    const inner = new MemoryObjectStore()
    const gate = holdingManifests(inner)
    gate.release()
    const coordinator = new WatchedCoordinator()
    const engine = startScriptedEngine({ store: gate.store, coordinator, sessions: EVERY_TURN })
    const { session_id } = await engine.service.createSession('t1', {})
    gate.hold()
    engine.model.enqueue({ text: 'hello' })
    const turn = engine.service.stepTurn('t1', session_id, { input: 'hi' }, {})
    let answered = false
    void turn.then(() => {
      answered = true
    })
    await gate.held()
    // The manifest PUT is held: endTurn runs meanwhile, and the turn does not answer yet.
    await until(() => coordinator.ended.length === 1)
    // endTurn is done: all the turn still waits for is the manifest.
    await settled()
    expect(answered).toBe(false)
    gate.release()
    const response = await turn
    expect(response.status).toBe('completed')
    const manifest = await storedManifest(inner, session_id)
    expect(manifest.last_batch).toBe(coordinator.ended[0]?.tip)
    expect(manifest.last_seq).toBe(response.next_seq - 1)
  })

  it('a manifest that lands after the next writer committed does not regress', async () => {
    const inner = new MemoryObjectStore()
    const gate = holdingManifests(inner)
    gate.release()
    const coordinator = new WatchedCoordinator()
    const first = startScriptedEngine({ store: gate.store, coordinator, sessions: EVERY_TURN })
    const second = startScriptedEngine({ store: inner, coordinator, sessions: EVERY_TURN })
    const { session_id } = await first.service.createSession('t1', {})
    gate.hold()
    first.model.enqueue({ text: 'one' })
    const turnOne = first.service.stepTurn('t1', session_id, { input: 'one' }, {})
    await gate.held()
    await until(() => coordinator.ended.length === 1)
    // The lease is released while the first writer's manifest PUT is still in flight: another
    // process takes the session and commits the next turn (and its manifest) first.
    second.model.enqueue({ text: 'two' })
    const turnTwo = await second.service.stepTurn('t1', session_id, { input: 'two' }, {})
    expect(turnTwo.status).toBe('completed')
    const afterTwo = await storedManifest(inner, session_id)
    gate.release()
    const one = await turnOne
    expect(one.status).toBe('completed')
    const manifest = await storedManifest(inner, session_id)
    expect(manifest.last_batch).toBe(afterTwo.last_batch)
    expect(manifest.last_seq).toBe(turnTwo.next_seq - 1)

    // Both processes go on with dense seqs and one history.
    first.model.enqueue({ text: 'three' })
    const three = await first.service.stepTurn('t1', session_id, { input: 'three' }, {})
    expect(three.status).toBe('completed')
    const page = await second.service.readEvents('t1', session_id, -1, 1000)
    expect(page.events.map((e) => e.seq)).toEqual(page.events.map((_, i) => i))
    const started = page.events.filter((e) => e.line.event.type === 'turn.started')
    expect(started).toHaveLength(3)
    expect((await storedManifest(inner, session_id)).last_seq).toBe(three.next_seq - 1)
  })

  it('a crash after endTurn, before the manifest lands, is continued by the next invocation', async () => {
    const inner = new MemoryObjectStore()
    const coordinator = new WatchedCoordinator()
    const gate = holdingManifests(inner)
    gate.release()
    const victim = startScriptedEngine({ store: gate.store, coordinator, sessions: EVERY_TURN })
    const { session_id } = await victim.service.createSession('t1', {
      tools: [echoTool(victim.receiver.url)],
    })
    gate.hold()
    victim.model.enqueue(
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] },
      { text: 'done' },
    )
    const dying = victim.service.stepTurn(
      't1',
      session_id,
      { input: 'go' },
      { idempotencyKey: 'k' },
    )
    await gate.held()
    await until(() => coordinator.ended.length === 1)
    // The process dies here: endTurn (tip, idempotency record, lease) done, manifest not written.
    const before = await storedManifest(inner, session_id)
    expect(before.last_batch).toBeLessThan(coordinator.ended[0]?.tip ?? 0)
    void dying.catch(() => undefined)

    const next = startScriptedEngine({ store: inner, coordinator, sessions: EVERY_TURN })
    try {
      // The retry is answered from the record, without the model or the tool.
      const again = await next.service.stepTurn(
        't1',
        session_id,
        { input: 'go' },
        { idempotencyKey: 'k' },
      )
      expect(again.status).toBe('completed')
      expect(victim.receiver.calls).toHaveLength(1)
      expect(next.model.requests).toHaveLength(0)
      // A new turn continues after the committed one and brings the manifest up to date.
      next.model.enqueue({ text: 'later' })
      const later = await next.service.stepTurn('t1', session_id, { input: 'more' }, {})
      expect(later.status).toBe('completed')
      const page = await next.service.readEvents('t1', session_id, -1, 1000)
      expect(page.events.map((e) => e.seq)).toEqual(page.events.map((_, i) => i))
      expect(page.events.filter((e) => e.line.event.type === 'turn.started')).toHaveLength(2)
      expect((await storedManifest(inner, session_id)).last_seq).toBe(later.next_seq - 1)
    } finally {
      gate.release()
    }
  })

  it('a failed endTurn with the manifest written is continued by the next invocation', async () => {
    const store = new MemoryObjectStore()
    const clock = testClock()
    const coordinator = new WatchedCoordinator({ clock })
    const engine = startScriptedEngine({
      store,
      coordinator,
      clock,
      defaults: { leaseMs: 200 },
      sessions: EVERY_TURN,
    })
    const { session_id } = await engine.service.createSession('t1', {})
    coordinator.failEndTurn = true
    engine.model.enqueue({ text: 'one' })
    const one = await engine.service.stepTurn('t1', session_id, { input: 'one' }, {})
    expect(one.status).toBe('completed')
    expect((await storedManifest(store, session_id)).last_seq).toBe(one.next_seq - 1)
    expect(engine.logs.some((l) => l.msg === 'ending the turn in the coordinator failed')).toBe(
      true,
    )
    coordinator.failEndTurn = false
    // The lease was never released: the next turn waits for it to expire.
    await clock.advance(250)
    engine.model.enqueue({ text: 'two' })
    const two = await engine.service.stepTurn('t1', session_id, { input: 'two' }, {})
    expect(two.status).toBe('completed')
    expect(two.events[0]?.type).toBe('turn.started')
    expect((await storedManifest(store, session_id)).last_seq).toBe(two.next_seq - 1)
  })
})
