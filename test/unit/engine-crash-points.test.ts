import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { crashingObjectStore } from '../support/crashing-object-store.ts'
import { echoTool } from '../support/engine-deps.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'
import { expectFilesMatchLog } from '../support/session-files.ts'
import type { InProcessToolReceiver } from '../support/tool-receiver.ts'

/**
 * Invariant 6 at the engine level: kill the invocation at each object write of a tool turn
 * (before and after the write lands); the retry with the same Idempotency-Key, on a fresh
 * process, loses nothing committed, duplicates nothing, never runs the tool twice, and ends
 * the turn honestly.
 */
describe.each([
  // An ordinary turn: the batch committed before the tool runs, its lines appended to
  // events.jsonl, the final batch, its lines, and the turn index it completes. The batches are
  // the commit points: no crash at either is answered as a success. A crash at the final append
  // or the index comes after the commit point: still answered, and the next writer repairs
  // events.jsonl and the index.
  { cadence: 'an ordinary turn', checkpointEvery: 16, writes: 5, answers: true },
  // A turn that also checkpoints and so writes the manifest (overlapped with endTurn).
  // A crash at the checkpoint or the manifest comes after the commit point: still answered.
  { cadence: 'a checkpoint turn', checkpointEvery: 1, writes: 7, answers: true },
])(
  'a tool turn killed at any object write ($cadence)',
  ({ checkpointEvery, writes: expected, answers }) => {
    const engineOn = (store: ObjectStore, receiver?: InProcessToolReceiver) =>
      startScriptedEngine({
        store,
        coordinator: new MemoryCoordinator(),
        sessions: { checkpointEvery },
        ...(receiver ? { receiver } : {}),
      })

    it('is continued or answered honestly by the retry', async () => {
      // Count the writes of one clean tool turn (after the session exists).
      const counted = countingObjectStore(new MemoryObjectStore())
      const clean = engineOn(counted.store)
      const { session_id: cleanId } = await clean.service.createSession('t1', {
        tools: [echoTool(clean.receiver.url)],
      })
      counted.reset()
      clean.model.enqueue(
        { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] },
        { text: 'done' },
      )
      await clean.service.stepTurn('t1', cleanId, { input: 'go' }, { idempotencyKey: 'k' })
      const writes = counted.counts.put + counted.counts.append
      expect(writes).toBe(expected)

      const seen = { toolRanThenCrashed: 0, answeredFirst: 0, crashed: 0 }
      for (const mode of ['before', 'after', 'torn'] as const) {
        for (let crashAt = 1; crashAt <= writes; crashAt++) {
          const label = `${mode} write #${crashAt}`
          const inner = new MemoryObjectStore()
          const setup = engineOn(inner)
          const tools = [echoTool(setup.receiver.url)]
          const { session_id } = await setup.service.createSession('t1', { tools })
          const dying = crashingObjectStore(inner, crashAt, mode)
          const victim = engineOn(dying.store, setup.receiver)
          victim.model.enqueue(
            { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] },
            { text: 'done' },
          )
          let first: Awaited<ReturnType<typeof victim.service.stepTurn>> | undefined
          try {
            first = await victim.service.stepTurn(
              't1',
              session_id,
              { input: 'go' },
              { idempotencyKey: 'k' },
            )
          } catch {
            first = undefined
          }
          // Every engine calls the setup engine's tool endpoint (as all would the one URL).
          const ranBefore = setup.receiver.calls.length
          if (!first || dying.crashed()) seen.crashed++
          if (ranBefore === 1 && !first) seen.toolRanThenCrashed++
          if (first) seen.answeredFirst++
          expect(ranBefore, label).toBeLessThanOrEqual(1)

          const retry = engineOn(inner, setup.receiver)
          retry.model.respond(() => ({ text: 'after retry' }))
          const again = await retry.service.stepTurn(
            't1',
            session_id,
            { input: 'go' },
            { idempotencyKey: 'k' },
          )
          if (first) expect(again, label).toEqual(first)
          expect(['completed', 'failed'], label).toContain(again.status)
          expect(setup.receiver.calls.length, `${label}: the tool never runs twice`).toBe(ranBefore)

          const page = await retry.service.readEvents('t1', session_id, -1, 1000)
          const types = page.events.map((e) => e.line.event.type)
          expect(
            page.events.map((e) => e.seq),
            label,
          ).toEqual(page.events.map((_, i) => i))
          expect(
            types.filter((t) => t === 'turn.started'),
            label,
          ).toHaveLength(1)
          expect(
            types.filter((t) => t === 'turn.completed' || t === 'turn.failed'),
            label,
          ).toHaveLength(1)
          const ids = page.events.flatMap((e) =>
            e.line.event.type === 'item.completed' && 'item' in e.line.event
              ? [e.line.event.item.id]
              : [],
          )
          expect(new Set(ids).size, `${label}: no item completed twice`).toBe(ids.length)
          // The next turn's writer brings events.jsonl and the turn index up to the log.
          retry.model.respond(() => ({ text: 'next' }))
          await retry.service.stepTurn('t1', session_id, { input: 'next' })
          await expectFilesMatchLog(inner, retry.service, session_id, label)
        }
      }
      // the sweep really hit the interesting points
      expect(seen.crashed).toBe(3 * writes)
      expect(seen.toolRanThenCrashed).toBeGreaterThan(0)
      expect(seen.answeredFirst > 0).toBe(answers)
    })
  },
)
