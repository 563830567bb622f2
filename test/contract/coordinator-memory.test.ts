import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { Clock } from '../../src/ports/clock.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { DurableIntentsCoordinator } from '../../src/store/durable-intents-coordinator.ts'
import { listAll } from '../../src/store/list-all.ts'
import { gate } from '../support/gate.ts'
import { acquired, describeCoordinator } from './coordinator.suite.ts'

class ManualClock implements Clock {
  constructor(private time = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.time
  }
  advance(ms: number): void {
    this.time += ms
  }
}

describeCoordinator('memory', async () => {
  const clock = new ManualClock()
  return {
    coordinator: new MemoryCoordinator({ clock }),
    advance: async (ms) => clock.advance(ms),
    cleanup: async () => {},
  }
})

describe('MemoryCoordinator specifics', () => {
  it('answers a renewal period for a running holder, the exact time left for a silent one', async () => {
    const clock = new ManualClock()
    const coordinator = new MemoryCoordinator({ clock })
    const request = { sessionId: 's', tenant: 't', leaseMs: 1_200 }
    acquired(await coordinator.beginTurn(request))
    // Renewed every 400 ms: 400 ms after the last renewal it runs; a quarter of its age (100 ms)
    // is less than the 1 s floor, so it is one renewal period.
    clock.advance(400)
    expect(await coordinator.beginTurn(request)).toEqual({
      status: 'busy',
      retryAfterMs: 400,
      state: 'running',
      heldForMs: 400,
      tip: null,
    })
    // 900 ms without a renewal (more than two periods): waited out, 300 ms.
    clock.advance(500)
    expect(await coordinator.beginTurn(request)).toEqual({
      status: 'busy',
      retryAfterMs: 300,
      state: 'silent',
      tip: null,
    })
  })

  it('lets the tip expire after tipTtlSeconds (it is only a hint)', async () => {
    const clock = new ManualClock()
    const coordinator = new MemoryCoordinator({ clock, tipTtlSeconds: 10 })
    await coordinator.setTip('s', 4)
    clock.advance(9_000)
    await coordinator.setTip('s', 2)
    clock.advance(9_000)
    expect(await coordinator.getTip('s')).toBe(4)
    clock.advance(1_001)
    expect(await coordinator.getTip('s')).toBeNull()
  })

  it('returns copies: callers cannot mutate stored intents', async () => {
    const coordinator = new MemoryCoordinator()
    await coordinator.enqueueIntent('s', { id: 'a', text: 'one' })
    const [first] = await coordinator.pendingIntents('s')
    if (first) first.text = 'changed'
    expect(await coordinator.pendingIntents('s')).toEqual([{ id: 'a', text: 'one' }])
  })
})

/** The in-process coordinator of the embedded default: pending intents kept in the store too. */
function durable(objects: ObjectStore, clock: Clock = new ManualClock()) {
  return new DurableIntentsCoordinator({
    inner: new MemoryCoordinator({ clock }),
    objects,
    folderOf: async (id) => `t/w/.vtcode/sessions/${encodeURIComponent(id)}/intents/`,
    clock,
  })
}

describeCoordinator('memory, intents in a memory store', async () => {
  const clock = new ManualClock()
  return {
    coordinator: durable(new MemoryObjectStore(), clock),
    advance: async (ms) => clock.advance(ms),
    cleanup: async () => {},
  }
})

describeCoordinator('memory, intents in an fs store', async () => {
  const clock = new ManualClock()
  const root = await mkdtemp(join(tmpdir(), 'turnline-intents-'))
  return {
    coordinator: durable(new FsObjectStore({ root }), clock),
    advance: async (ms) => clock.advance(ms),
    cleanup: () => rm(root, { recursive: true, force: true }),
  }
})

describe('DurableIntentsCoordinator: pending intents survive a restart', () => {
  const intent = (n: number) => ({ id: `intent-${n}`, text: `follow-up ${n}` })
  const begin = { sessionId: 's1', tenant: 't', leaseMs: 10_000 }

  it('a new process has them in the order they were accepted, the acknowledged ones gone', async () => {
    const objects = new MemoryObjectStore()
    const first = durable(objects)
    for (let n = 1; n <= 5; n++) await first.enqueueIntent('s1', intent(n))
    const lease = acquired(await first.beginTurn(begin))
    await first.endTurn({ lease, tenant: 't', tip: 1, ackIntents: [intent(2).id, intent(4).id] })
    const restarted = durable(objects)
    const turn = await restarted.beginTurn(begin)
    expect(turn).toMatchObject({ status: 'acquired', intents: [1, 3, 5].map(intent) })
    expect((await listAll(objects, 't/')).objects.map((o) => o.key.slice(-15))).toEqual([
      '0000000000.json',
      '0000000002.json',
      '0000000004.json',
    ])
    // numbering goes on after the stored ones: order survives further restarts
    await restarted.enqueueIntent('s1', intent(6))
    expect((await durable(objects).pendingIntents('s1')).map((p) => p.id)).toEqual(
      [1, 3, 5, 6].map((n) => intent(n).id),
    )
  })

  it('keeps the cap across a restart, and stores exactly the 16 accepted of 20 racing', async () => {
    const objects = new MemoryObjectStore()
    const one = durable(objects)
    const racing = await Promise.all(
      Array.from({ length: 20 }, (_, i) => one.enqueueIntent('s2', intent(i))),
    )
    expect(racing.filter((r) => r.status === 'accepted')).toHaveLength(16)
    expect((await listAll(objects, 't/w/.vtcode/sessions/s2/')).objects).toHaveLength(16)
    expect(await durable(objects).enqueueIntent('s2', intent(99))).toEqual({
      status: 'full',
      capacity: 16,
    })
  })

  it('accepts nothing it could not store, and keeps pending what it could not delete', async () => {
    const inner = new MemoryObjectStore()
    let failing: 'put' | 'delete' | undefined
    const objects: ObjectStore = {
      get: (key) => inner.get(key),
      list: (prefix, options) => inner.list(prefix, options),
      put: async (key, body, options) => {
        if (failing === 'put') throw new TurnlineError('storage_unavailable', 'disk full')
        return inner.put(key, body, options)
      },
      delete: async (key) => {
        if (failing === 'delete') throw new TurnlineError('storage_unavailable', 'disk gone')
        return inner.delete(key)
      },
    }
    const coordinator = durable(objects)
    failing = 'put'
    await expect(coordinator.enqueueIntent('s1', intent(1))).rejects.toMatchObject({
      code: 'storage_unavailable',
    })
    expect(await coordinator.pendingIntents('s1')).toEqual([])
    failing = undefined
    await coordinator.enqueueIntent('s1', intent(2))
    failing = 'delete'
    expect(await coordinator.ackIntents('s1', [intent(2).id])).toBe(0)
    expect(await coordinator.pendingIntents('s1')).toEqual([intent(2)])
    failing = undefined
    expect(await coordinator.ackIntents('s1', [intent(2).id])).toBe(1)
    expect(await durable(objects).pendingIntents('s1')).toEqual([])
  })

  it('lets no turn see an intent before it is stored', async () => {
    const inner = new MemoryObjectStore()
    const stored = gate()
    const writing = gate()
    const objects: ObjectStore = {
      get: (key) => inner.get(key),
      list: (prefix, options) => inner.list(prefix, options),
      delete: (key) => inner.delete(key),
      put: async (key, body, options) => {
        writing.open()
        await stored.promise
        return inner.put(key, body, options)
      },
    }
    const coordinator = durable(objects)
    const accepting = coordinator.enqueueIntent('s1', intent(1))
    await writing.promise
    const turn = await coordinator.beginTurn(begin)
    expect(turn).toMatchObject({ status: 'acquired', intents: [] })
    stored.open()
    expect(await accepting).toEqual({ status: 'accepted', pending: 1 })
    expect(await durable(inner).pendingIntents('s1')).toEqual([intent(1)])
  })

  it('keeps the intents of an id that names no session folder in memory only', async () => {
    const objects = new MemoryObjectStore()
    const coordinator = new DurableIntentsCoordinator({
      inner: new MemoryCoordinator(),
      objects,
      folderOf: async () => undefined,
    })
    await coordinator.enqueueIntent('.probe/x', intent(1))
    expect(await coordinator.pendingIntents('.probe/x')).toEqual([intent(1)])
    expect(objects.size).toBe(0)
  })
})
