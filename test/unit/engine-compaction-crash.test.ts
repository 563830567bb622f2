import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { assertNoOrphansInRequests, committed, scriptAgent } from '../support/compaction-engine.ts'
import { crashingObjectStore } from '../support/crashing-object-store.ts'
import { echoTool } from '../support/engine-deps.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'
import type { ScriptedStep } from '../support/scripted-model.ts'

/**
 * A turn that compacts at its boundary, killed at each object write (archive, envelope, reset
 * batch, checkpoint, manifest, final batch — before and after the write lands). The retry with
 * the same Idempotency-Key on a fresh process ends the turn with one boundary and one
 * turn.started in the log, dense seqs, and a transcript that keeps the tool-call protocol.
 */
const engineOn = (store: ObjectStore) =>
  startScriptedEngine({ store, coordinator: new MemoryCoordinator() })

/** A session of three tool turns whose last answer reports 1,950 prompt tokens (hard: 1,800). */
async function prepared(store: ObjectStore) {
  const setup = await engineOn(store)
  const { session_id: sid } = await setup.service.createSession('t1', {
    tools: [echoTool(setup.receiver.url)],
    harness: { max_context_tokens: 2000 },
  })
  const steps: ScriptedStep[] = [1, 2, 3].flatMap((n) => [
    { toolCalls: [{ id: `call_${n}`, name: 'lookup', arguments: `{"q":"${n}"}` }] },
    { text: `answer ${n}`, usage: { input_tokens: n === 3 ? 1950 : 300 * n, output_tokens: 5 } },
  ])
  scriptAgent(setup.model, steps)
  for (let n = 1; n <= 3; n++) await setup.service.stepTurn('t1', sid, { input: `task ${n}` })
  return { setup, sid }
}

describe('a compacting turn killed at any object write', () => {
  it('is continued or answered honestly by the retry', async () => {
    const counted = countingObjectStore(new MemoryObjectStore())
    const clean = await prepared(counted.store)
    const cleanVictim = await engineOn(counted.store)
    scriptAgent(cleanVictim.model, [{ text: 'done' }])
    counted.reset()
    const cleanTurn = await cleanVictim.service.stepTurn(
      't1',
      clean.sid,
      { input: 'task 4' },
      { idempotencyKey: 'k' },
    )
    expect(cleanTurn.events.map((e) => e.type)).toContain('thread.compact_boundary')
    const writes = counted.counts.put + counted.counts.append
    await Promise.all([clean.setup.close(), cleanVictim.close()])
    expect(writes).toBeGreaterThanOrEqual(6)

    let answeredFirst = 0
    for (const mode of ['before', 'after'] as const) {
      for (let crashAt = 1; crashAt <= writes; crashAt++) {
        const label = `${mode} write #${crashAt}`
        const inner = new MemoryObjectStore()
        const { setup, sid } = await prepared(inner)
        const dying = crashingObjectStore(inner, crashAt, mode)
        const victim = await engineOn(dying.store)
        scriptAgent(victim.model, [{ text: 'done' }])
        let first: Awaited<ReturnType<typeof victim.service.stepTurn>> | undefined
        try {
          first = await victim.service.stepTurn(
            't1',
            sid,
            { input: 'task 4' },
            { idempotencyKey: 'k' },
          )
          answeredFirst += 1
        } catch {
          first = undefined
        }

        const retry = await engineOn(inner)
        const script = scriptAgent(retry.model, [{ text: 'after retry' }])
        const again = await retry.service.stepTurn(
          't1',
          sid,
          { input: 'task 4' },
          { idempotencyKey: 'k' },
        )
        if (first) expect(again, label).toEqual(first)
        expect(again.status, label).toBe('completed')
        expect(script.unexpected, label).toEqual([])

        const page = await retry.service.readEvents('t1', sid, -1, 1000)
        expect(
          page.events.map((e) => e.seq),
          label,
        ).toEqual(page.events.map((_, i) => i))
        const types = page.events.map((e) => e.line.event.type)
        expect(
          types.filter((t) => t === 'turn.started'),
          label,
        ).toHaveLength(4)
        expect(
          types.filter((t) => t === 'turn.completed'),
          label,
        ).toHaveLength(4)
        expect(
          types.filter((t) => t === 'thread.compact_boundary'),
          label,
        ).toHaveLength(1)
        const { history, state } = await committed(retry.deps, 't1', sid)
        expect(state.open_turn, label).toBeNull()
        expect(state.compaction?.segment?.id, label).toBe('segment-00000002')
        assertNoOrphansInRequests([...victim.model.requests, ...retry.model.requests])
        expect(history.at(-1), label).toMatchObject({ role: 'assistant' })
        await Promise.all([setup.close(), victim.close(), retry.close()])
      }
    }
    expect(answeredFirst).toBeLessThan(2 * writes)
    // One compacting turn replayed for every write, twice: seconds alone, more on a loaded machine.
  }, 60_000)
})
