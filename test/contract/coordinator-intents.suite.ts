/**
 * The steering-intent part of the Coordinator contract (VT Code: at most 16 pending, queued plus
 * in flight; order kept; acknowledged by id after the batch that applied them committed).
 * Registered inside `describeCoordinator`, with that suite's fresh coordinator per test.
 */
import { describe, expect, it } from 'vitest'
import { isTurnlineError } from '../../src/contract/errors.ts'
import {
  type Coordinator,
  DEFAULT_INTENT_CAPACITY,
  type QueuedIntent,
} from '../../src/ports/coordinator.ts'

const intent = (n: number, text = `follow-up ${n}`): QueuedIntent => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  text,
})

async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    if (isTurnlineError(error)) return error.code
    throw error
  }
}

export function describeCoordinatorIntents(c: () => Coordinator): void {
  describe('intents', () => {
    it('hands pending intents to beginTurn and acknowledges them in endTurn', async () => {
      await c().enqueueIntent('s-turn', intent(1, 'same text'))
      await c().enqueueIntent('s-turn', intent(2, 'same text'))
      await c().enqueueIntent('s-turn', intent(3))
      const begin = await c().beginTurn({ sessionId: 's-turn', tenant: 't', leaseMs: 10_000 })
      if (begin.status !== 'acquired') throw new Error(`expected the lease, got ${begin.status}`)
      expect(begin.intents).toEqual([intent(1, 'same text'), intent(2, 'same text'), intent(3)])
      await c().endTurn({
        lease: begin.lease,
        tenant: 't',
        tip: 1,
        ackIntents: [intent(1).id, intent(2).id],
      })
      expect(await c().pendingIntents('s-turn')).toEqual([intent(3)])
      const next = await c().beginTurn({ sessionId: 's-turn', tenant: 't', leaseMs: 10_000 })
      expect(next).toMatchObject({ status: 'acquired', tip: 1, intents: [intent(3)] })
    })

    it('the default capacity is 16', () => {
      expect(DEFAULT_INTENT_CAPACITY).toBe(16)
    })

    it('accepts 16, refuses the 17th as full, and keeps order', async () => {
      for (let n = 1; n <= 16; n++) {
        expect(await c().enqueueIntent('s1', intent(n))).toEqual({ status: 'accepted', pending: n })
      }
      expect(await c().enqueueIntent('s1', intent(17))).toEqual({ status: 'full', capacity: 16 })
      const pending = await c().pendingIntents('s1')
      expect(pending).toEqual(Array.from({ length: 16 }, (_, i) => intent(i + 1)))
    })

    it('of 20 concurrent enqueues exactly 16 are accepted', async () => {
      const all = Array.from({ length: 20 }, (_, i) => intent(i + 1))
      const results = await Promise.all(all.map((item) => c().enqueueIntent('s-race', item)))
      const accepted = all.filter((_, i) => results[i]?.status === 'accepted')
      expect(accepted).toHaveLength(16)
      expect(results.filter((r) => r.status === 'full')).toHaveLength(4)
      const pending = await c().pendingIntents('s-race')
      expect(pending).toHaveLength(16)
      expect(new Set(pending.map((p) => p.id))).toEqual(new Set(accepted.map((a) => a.id)))
      const counts = results.flatMap((r) => (r.status === 'accepted' ? [r.pending] : []))
      expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
    })

    it('honours an explicit capacity', async () => {
      expect(await c().enqueueIntent('s1', intent(1), 2)).toMatchObject({ status: 'accepted' })
      expect(await c().enqueueIntent('s1', intent(2), 2)).toMatchObject({ status: 'accepted' })
      expect(await c().enqueueIntent('s1', intent(3), 2)).toEqual({ status: 'full', capacity: 2 })
    })

    it('ack removes exactly the acknowledged ids and frees capacity', async () => {
      for (let n = 1; n <= 16; n++) await c().enqueueIntent('s1', intent(n))
      const acked = [intent(2).id, intent(5).id, intent(16).id, intent(99).id]
      expect(await c().ackIntents('s1', acked)).toBe(3)
      const left = await c().pendingIntents('s1')
      expect(left.map((p) => p.id)).toEqual(
        [1, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].map((n) => intent(n).id),
      )
      expect(await c().ackIntents('s1', acked)).toBe(0)
      expect(await c().ackIntents('s1', [])).toBe(0)
      expect(await c().enqueueIntent('s1', intent(20))).toEqual({ status: 'accepted', pending: 14 })
      expect((await c().pendingIntents('s1')).at(-1)).toEqual(intent(20))
    })

    it('acknowledging everything empties the queue', async () => {
      await c().enqueueIntent('s1', intent(1))
      await c().enqueueIntent('s1', intent(2))
      expect(await c().ackIntents('s1', [intent(1).id, intent(2).id])).toBe(2)
      expect(await c().pendingIntents('s1')).toEqual([])
    })

    it('the same text with a different id is kept; the same id is not queued twice', async () => {
      await c().enqueueIntent('s1', intent(1, 'same text'))
      expect(await c().enqueueIntent('s1', intent(2, 'same text'))).toEqual({
        status: 'accepted',
        pending: 2,
      })
      expect(await c().enqueueIntent('s1', intent(1, 'same text'))).toEqual({
        status: 'accepted',
        pending: 2,
      })
      expect(await c().pendingIntents('s1')).toEqual([
        intent(1, 'same text'),
        intent(2, 'same text'),
      ])
    })

    it('keeps text exactly: empty, multi-line, unicode, JSON-looking, large', async () => {
      const texts = [
        '',
        'line 1\nline 2\r\n\n',
        'ü 日本 🚀 "q" \\',
        '{"id":"x"}',
        '42',
        'x'.repeat(100_000),
      ]
      for (const [i, text] of texts.entries()) await c().enqueueIntent('s1', intent(i, text))
      expect((await c().pendingIntents('s1')).map((p) => p.text)).toEqual(texts)
    })

    it('keeps the artifact a long follow-up was kept as, beside its preview, through enqueue, begin and ack', async () => {
      const artifacts = [{ artifact_id: `out_${'a1'.repeat(16)}`, size: 2_097_152, lines: 30_000 }]
      const kept = { ...intent(1, 'head…\n[input of 2,097,152 bytes …]\n…tail'), artifacts }
      await c().enqueueIntent('s-kept', kept)
      await c().enqueueIntent('s-kept', intent(2))
      // the same id again: accepted, not queued twice, whatever its entry's version
      expect(await c().enqueueIntent('s-kept', kept)).toEqual({ status: 'accepted', pending: 2 })
      expect(await c().pendingIntents('s-kept')).toEqual([kept, intent(2)])
      const begin = await c().beginTurn({ sessionId: 's-kept', tenant: 't', leaseMs: 10_000 })
      expect(begin).toMatchObject({ status: 'acquired', intents: [kept, intent(2)] })
      if (begin.status !== 'acquired') return
      await c().endTurn({ lease: begin.lease, tenant: 't', tip: 1, ackIntents: [kept.id] })
      expect(await c().pendingIntents('s-kept')).toEqual([intent(2)])
      const bad = { ...intent(3), artifacts: [{ artifact_id: 'nope', size: 1, lines: 1 }] }
      expect(await errorCode(c().enqueueIntent('s-kept', bad))).toBe('invalid_input')
    })

    it('queues of different sessions are independent', async () => {
      for (let n = 1; n <= 16; n++) await c().enqueueIntent('s-a', intent(n))
      expect(await c().enqueueIntent('s-b', intent(1))).toEqual({ status: 'accepted', pending: 1 })
      expect(await c().pendingIntents('s-c')).toEqual([])
      expect(await c().ackIntents('s-b', [intent(2).id])).toBe(0)
      expect(await c().pendingIntents('s-a')).toHaveLength(16)
    })

    it('rejects unusable ids and capacities before any I/O', async () => {
      for (const id of ['', 'has space', 'line\nfeed', 'x'.repeat(129)]) {
        expect(await errorCode(c().enqueueIntent('s1', { id, text: 't' }))).toBe('invalid_input')
      }
      expect(await errorCode(c().enqueueIntent('s1', intent(1), 0))).toBe('invalid_input')
      expect(await c().pendingIntents('s1')).toEqual([])
    })
  })
}
