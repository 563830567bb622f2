import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import {
  DurableIntentsCoordinator,
  sessionIntentFolders,
} from '../../src/store/durable-intents-coordinator.ts'
import { listAll } from '../../src/store/list-all.ts'
import { SessionLocator } from '../../src/store/session-locator.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { crashingObjectStore } from '../support/crashing-object-store.ts'
import { gate } from '../support/gate.ts'
import { startScriptedEngine, useScriptedEngine } from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()

const userMessages = (messages: HistoryMessage[] | undefined) =>
  (messages ?? []).filter((m) => m.role === 'user').map((m) => m.content)

describe('steering intents', () => {
  it('accepts 16 while a turn runs, refuses the 17th, and applies them in order next turn', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    // The answer is held until the intents are in: the turn is running all the while.
    const answer = gate()
    model.enqueue({ text: 'slow answer', hold: answer.promise })
    const running = service.stepTurn('t1', session_id, { input: 'first' })
    await model.requested(1)
    const accepted = []
    for (let i = 1; i <= 16; i++) {
      accepted.push(
        await service.enqueueIntent('t1', session_id, {
          text: i === 2 ? 'same' : i === 3 ? 'same' : `follow ${i}`,
        }),
      )
    }
    expect(accepted.map((a) => a.pending)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
    for (const a of accepted) expect(a.id).toMatch(/^[0-9a-f-]{36}$/)
    await expect(
      service.enqueueIntent('t1', session_id, { text: 'one too many' }),
    ).rejects.toMatchObject({
      code: 'follow_up_queue_full',
      message: expect.stringContaining('capacity 16'),
    })
    answer.open()
    const first = await running
    expect(first.events.some((e) => e.type === 'interjected')).toBe(false)

    model.enqueue({ text: 'handled' })
    const next = await service.stepTurn('t1', session_id, { input: 'and now' })
    expect(next.events.filter((e) => e.type === 'interjected')).toHaveLength(16)
    const seen = userMessages(model.requests[1]?.messages)
    expect(seen.slice(1)).toEqual([
      'follow 1',
      'same',
      'same',
      ...Array.from({ length: 13 }, (_, i) => `follow ${i + 4}`),
      'and now',
    ])
    // consumed exactly once: the queue is empty and the next turn applies nothing
    model.enqueue({ text: 'quiet' })
    const after = await service.stepTurn('t1', session_id, { input: 'again' })
    expect(after.events.some((e) => e.type === 'interjected')).toBe(false)
    expect(await service.enqueueIntent('t1', session_id, { text: 'room again' })).toMatchObject({
      pending: 1,
    })
  })

  it('a turn with no input starts from the queued follow-ups', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    await expect(service.stepTurn('t1', session_id, {})).rejects.toMatchObject({
      code: 'invalid_input',
    })
    await service.enqueueIntent('t1', session_id, { text: 'please also lint' })
    model.enqueue({ text: 'linted' })
    const turn = await service.stepTurn('t1', session_id, {})
    expect(turn.status).toBe('completed')
    expect(userMessages(model.requests[0]?.messages)).toEqual(['please also lint'])
  })

  it('replays an intent exactly once across a crash before or after its batch', async () => {
    for (const when of ['before', 'after'] as const) {
      const inner = new MemoryObjectStore()
      const coordinator = new MemoryCoordinator()
      let armed = false
      const store: ObjectStore = {
        get: (k) => inner.get(k),
        list: (p, o) => inner.list(p, o),
        delete: (k) => inner.delete(k),
        put: async (k, b, o) => {
          if (!armed || !k.includes('/log/0000000001.json')) return inner.put(k, b, o)
          armed = false
          if (when === 'after') await inner.put(k, b, o)
          throw new Error('process killed')
        },
      }
      const a = startScriptedEngine({ store, coordinator })
      const b = startScriptedEngine({ store: inner, coordinator })
      const { session_id } = await a.service.createSession('t1', {})
      await a.service.enqueueIntent('t1', session_id, { text: 'steer left' })
      a.model.enqueue({ text: 'ok' })
      armed = true
      await expect(a.service.stepTurn('t1', session_id, { input: 'go' })).rejects.toThrow(
        'process killed',
      )
      // 'before': nothing committed, so the intent is still pending and applied now;
      // 'after': its batch committed (the answer was lost), so it is only acknowledged.
      b.model.respond(() => ({ text: 'fine' }))
      const next = await b.service.stepTurn('t1', session_id, { input: 'next' })
      expect(next.status).toBe('completed')
      const page = await b.service.readEvents('t1', session_id, -1, 1000)
      const interjections = page.events.filter((e) => e.line.event.type === 'interjected')
      expect(interjections, when).toHaveLength(1)
      const last = b.model.requests.at(-1)
      expect(
        userMessages(last?.messages).filter((t) => t === 'steer left'),
        when,
      ).toHaveLength(1)
      expect(await coordinator.pendingIntents(`t1/${session_id}`), when).toEqual([])
      a.model.assertDone()
      b.model.assertDone()
    }
  })

  it('with the in-process coordinator, an intent survives a restart at any write of its turn', async () => {
    /** A process of the embedded default over `store`: in-process coordinator, intents stored. */
    const processOn = (store: ObjectStore, objects: ObjectStore) =>
      startScriptedEngine({
        store,
        coordinator: new DurableIntentsCoordinator({
          inner: new MemoryCoordinator(),
          objects,
          folderOf: sessionIntentFolders(
            new SessionStore({ store }),
            new SessionLocator(store, ''),
          ),
        }),
      })
    // the turn's writes: its batch, the append to events.jsonl, the turn index (then the delete
    // of the intent's object, after the commit)
    for (let crashAt = 1; crashAt <= 3; crashAt++) {
      for (const mode of ['before', 'after'] as const) {
        const label = `${mode} write #${crashAt}`
        const inner = new MemoryObjectStore()
        const setup = processOn(inner, inner)
        const { session_id } = await setup.service.createSession('t1', {})
        await setup.service.enqueueIntent('t1', session_id, { text: 'steer left' })
        const dying = crashingObjectStore(inner, crashAt, mode)
        const victim = processOn(dying.store, dying.store)
        victim.model.enqueue({ text: 'ok' })
        await victim.service.stepTurn('t1', session_id, { input: 'go' }).catch(() => undefined)
        expect(dying.crashed(), label).toBe(true)

        const restarted = processOn(inner, inner)
        restarted.model.respond(() => ({ text: 'fine' }))
        const next = await restarted.service.stepTurn('t1', session_id, { input: 'next' })
        expect(next.status, label).toBe('completed')
        const page = await restarted.service.readEvents('t1', session_id, -1, 1000)
        const interjections = page.events.filter((e) => e.line.event.type === 'interjected')
        expect(interjections, label).toHaveLength(1)
        // in the restarted turn's request exactly once: applied now, or carried from its batch
        const last = userMessages(restarted.model.requests.at(-1)?.messages)
        expect(
          last.filter((text) => text === 'steer left'),
          label,
        ).toHaveLength(1)
        expect(await restarted.deps.coordinator.pendingIntents(`t1/${session_id}`)).toEqual([])
        const left = (await listAll(inner, '')).objects.filter((o) => o.key.includes('/intents/'))
        expect(left, label).toEqual([])
      }
    }
  })
})
