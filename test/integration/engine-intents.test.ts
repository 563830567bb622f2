import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { useEngine } from '../support/engine-fixture.ts'
import { startEngine } from '../support/engine-harness.ts'

const fixture = useEngine()

const userMessages = (body: Record<string, unknown> | undefined) =>
  ((body?.messages ?? []) as { role: string; content: string }[])
    .filter((m) => m.role === 'user')
    .map((m) => m.content)

describe('steering intents', () => {
  it('accepts 16 while a turn runs, refuses the 17th, and applies them in order next turn', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    mock.enqueue({ text: 'slow answer', delayMs: 300 })
    const running = service.stepTurn('t1', session_id, { input: 'first' })
    await new Promise((resolve) => setTimeout(resolve, 50))
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
    const first = await running
    expect(first.events.some((e) => e.type === 'interjected')).toBe(false)

    mock.enqueue({ text: 'handled' })
    const next = await service.stepTurn('t1', session_id, { input: 'and now' })
    expect(next.events.filter((e) => e.type === 'interjected')).toHaveLength(16)
    const seen = userMessages(mock.requests[1]?.body)
    expect(seen.slice(1)).toEqual([
      'follow 1',
      'same',
      'same',
      ...Array.from({ length: 13 }, (_, i) => `follow ${i + 4}`),
      'and now',
    ])
    // consumed exactly once: the queue is empty and the next turn applies nothing
    mock.enqueue({ text: 'quiet' })
    const after = await service.stepTurn('t1', session_id, { input: 'again' })
    expect(after.events.some((e) => e.type === 'interjected')).toBe(false)
    expect(await service.enqueueIntent('t1', session_id, { text: 'room again' })).toMatchObject({
      pending: 1,
    })
  })

  it('a turn with no input starts from the queued follow-ups', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    await expect(service.stepTurn('t1', session_id, {})).rejects.toMatchObject({
      code: 'invalid_input',
    })
    await service.enqueueIntent('t1', session_id, { text: 'please also lint' })
    mock.enqueue({ text: 'linted' })
    const turn = await service.stepTurn('t1', session_id, {})
    expect(turn.status).toBe('completed')
    expect(userMessages(mock.requests[0]?.body)).toEqual(['please also lint'])
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
      const a = await startEngine({ store, coordinator })
      const b = await startEngine({ store: inner, coordinator })
      try {
        const { session_id } = await a.service.createSession('t1', {})
        await a.service.enqueueIntent('t1', session_id, { text: 'steer left' })
        a.mock.enqueue({ text: 'ok' })
        armed = true
        await expect(a.service.stepTurn('t1', session_id, { input: 'go' })).rejects.toThrow(
          'process killed',
        )
        // 'before': nothing committed, so the intent is still pending and applied now;
        // 'after': its batch committed (the answer was lost), so it is only acknowledged.
        b.mock.respond(() => ({ text: 'fine' }))
        const next = await b.service.stepTurn('t1', session_id, { input: 'next' })
        expect(next.status).toBe('completed')
        const page = await b.service.readEvents('t1', session_id, -1, 1000)
        const interjections = page.events.filter((e) => e.line.event.type === 'interjected')
        expect(interjections, when).toHaveLength(1)
        const last = b.mock.requests.at(-1)
        expect(
          userMessages(last?.body).filter((t) => t === 'steer left'),
          when,
        ).toHaveLength(1)
        expect(await coordinator.pendingIntents(`t1/${session_id}`), when).toEqual([])
      } finally {
        await a.close()
        await b.close()
      }
    }
  })
})
