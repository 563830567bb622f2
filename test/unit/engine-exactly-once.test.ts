import { describe, expect, it, vi } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { echoTool } from '../support/engine-deps.ts'
import { gate } from '../support/gate.ts'
import {
  type ScriptedEngine,
  startScriptedEngine,
  useScriptedEngine,
} from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()

describe('exactly-once turns', () => {
  it('answers a retried Idempotency-Key with the first outcome, without the model', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    model.enqueue({ text: 'only once' })
    const answers = []
    for (let i = 0; i < 3; i++) {
      answers.push(
        await service.stepTurn('t1', session_id, { input: 'hi' }, { idempotencyKey: 'key-1' }),
      )
    }
    expect(model.requests).toHaveLength(1)
    expect(answers[1]).toEqual(answers[0])
    expect(answers[2]).toEqual(answers[0])
    const page = await service.readEvents('t1', session_id, -1, 100)
    expect(page.events.filter((e) => e.line.event.type === 'turn.started')).toHaveLength(1)
  })

  it('still answers from the log when the coordinator forgot the key', async () => {
    const store = new MemoryObjectStore()
    const a = startScriptedEngine({ store })
    try {
      const { session_id } = await a.service.createSession('t1', {})
      a.model.enqueue({ text: 'first' })
      const first = await a.service.stepTurn(
        't1',
        session_id,
        { input: 'x' },
        { idempotencyKey: 'k-2' },
      )
      // Same store, a brand-new coordinator (Redis flushed) and model server.
      const b = startScriptedEngine({ store, coordinator: new MemoryCoordinator() })
      try {
        const again = await b.service.stepTurn(
          't1',
          session_id,
          { input: 'x' },
          { idempotencyKey: 'k-2' },
        )
        expect(again).toEqual(first)
        expect(b.model.requests).toHaveLength(0)
      } finally {
        await b.close()
      }
    } finally {
      await a.close()
    }
  })

  it('lets one of 10 concurrent turns run; the others get session_busy with a retry hint', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    // The winner's answer is held until the nine others were refused.
    const answer = gate()
    model.enqueue({ text: 'slow', hold: answer.promise })
    let refused = 0
    const turns = Array.from({ length: 10 }, (_, i) =>
      service.stepTurn('t1', session_id, { input: `n${i}` }),
    )
    for (const turn of turns) {
      turn.catch(() => {
        refused += 1
      })
    }
    await vi.waitFor(() => expect(refused).toBe(9))
    answer.open()
    const results = await Promise.allSettled(turns)
    const ok = results.filter((r) => r.status === 'fulfilled')
    const busy = results.filter((r) => r.status === 'rejected')
    expect(ok).toHaveLength(1)
    expect(busy).toHaveLength(9)
    for (const r of busy) {
      expect(r.reason).toMatchObject({ code: 'session_busy', retryAfter: expect.any(Number) })
    }
    const page = await service.readEvents('t1', session_id, -1, 100)
    expect(page.events.filter((e) => e.line.event.type === 'turn.started')).toHaveLength(1)
    expect(page.events.map((e) => e.seq)).toEqual(page.events.map((_, i) => i))
  })

  it('never shows a session to another tenant', async () => {
    const { service } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    await expect(service.getSession('t2', session_id)).rejects.toMatchObject({ code: 'not_found' })
    await expect(service.stepTurn('t2', session_id, { input: 'x' })).rejects.toMatchObject({
      code: 'not_found',
    })
    await expect(service.readEvents('t2', session_id, -1, 10)).rejects.toMatchObject({
      code: 'not_found',
    })
    await expect(service.cancel('t2', session_id)).rejects.toMatchObject({ code: 'not_found' })
    expect(
      (await service.listSessions('t2', { workspace: 'default', limit: 50, order: 'newest' }))
        .sessions,
    ).toEqual([])
  })

  it('reports a tool call cut off by a crash honestly and never runs it again', async () => {
    await afterCrashedToolCall('k-crash', async ({ a, b, sessionId: session_id }) => {
      expect(a.receiver.calls).toHaveLength(1)

      // The retry continues the same turn: the cut-off call is reported failed, the model goes on.
      b.model.enqueue({ text: 'the lookup was interrupted; stopping' })
      const retry = await b.service.stepTurn(
        't1',
        session_id,
        { input: 'go' },
        { idempotencyKey: 'k-crash' },
      )
      expect(retry.status).toBe('completed')
      expect(retry.turn_id).toBe('turn-1')
      expect(retry.events[0]).toMatchObject({
        type: 'item.completed',
        item: { id: 'item_0', type: 'tool_invocation', status: 'failed', outcome: 'error' },
      })
      expect(retry.events[2]).toMatchObject({
        item: {
          id: 'item_0:output',
          status: 'failed',
          output: expect.stringContaining('interrupted'),
        },
      })
      expect(a.receiver.calls).toHaveLength(1)
      expect(b.receiver.calls).toHaveLength(0)
      const told = b.model.requests[0]?.messages as { role: string; content: string }[]
      expect(told.at(-1)).toMatchObject({
        role: 'tool',
        content: expect.stringContaining('not run again'),
      })
      const page = await b.service.readEvents('t1', session_id, -1, 100)
      expect(page.events.map((e) => e.seq)).toEqual(page.events.map((_, i) => i))
      expect(page.events.filter((e) => e.line.event.type === 'turn.started')).toHaveLength(1)
    })
  })

  it('refuses to continue a cut-off turn under its key with a different input (422)', async () => {
    await afterCrashedToolCall('k-open', async ({ b, sessionId: session_id }) => {
      await expect(
        b.service.stepTurn('t1', session_id, { input: 'stop' }, { idempotencyKey: 'k-open' }),
      ).rejects.toMatchObject({ code: 'idempotency_key_reused' })
      expect(b.model.requests).toHaveLength(0)
      b.model.enqueue({ text: 'done' })
      const retry = await b.service.stepTurn(
        't1',
        session_id,
        { input: 'go' },
        { idempotencyKey: 'k-open' },
      )
      expect(retry).toMatchObject({ turn_id: 'turn-1', status: 'completed' })
    })
  })
})

/**
 * Two engines on one store, as two processes: `a` starts a turn under `idempotencyKey` whose one
 * tool call runs, and then its writer dies: the turn's final batch never lands. `b` is the next
 * process, with a brand-new coordinator (Redis flushed) and model server. Closes both after
 * `check`.
 */
async function afterCrashedToolCall(
  idempotencyKey: string,
  check: (engines: { a: ScriptedEngine; b: ScriptedEngine; sessionId: string }) => Promise<void>,
): Promise<void> {
  const inner = new MemoryObjectStore()
  let crash = false
  const dying: ObjectStore = {
    get: (k) => inner.get(k),
    list: (p, o) => inner.list(p, o),
    delete: (k) => inner.delete(k),
    put: (k, b, o) => {
      // the writer dies right after the tool ran: its final batch never lands
      if (crash && k.includes('/log/0000000002.json')) throw new Error('process killed')
      return inner.put(k, b, o)
    },
  }
  const a = startScriptedEngine({ store: dying })
  const b = startScriptedEngine({ store: inner, coordinator: new MemoryCoordinator() })
  try {
    const tools = [echoTool(a.receiver.url)]
    const { session_id } = await a.service.createSession('t1', { tools })
    // The call runs; the answer after it is what the final batch (which never lands) carries.
    a.model.enqueue(
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] },
      { text: 'looked it up' },
    )
    crash = true
    await expect(
      a.service.stepTurn('t1', session_id, { input: 'go' }, { idempotencyKey }),
    ).rejects.toThrow('process killed')
    await check({ a, b, sessionId: session_id })
  } finally {
    await a.close()
    await b.close()
  }
}
