import { describe, expect, it } from 'vitest'
import { ResponsesRequestSchema } from '../../src/contract/open-responses-request.ts'
import { toResponseRun } from '../../src/contract/open-responses-run.ts'
import { gate } from './gate.ts'
import { type CapBackends, deployment, refusal } from './pending-cap.suite.ts'
import { until } from './until.ts'

/**
 * Keyed retries of background turns and responses whose turn already ran, as the pending-work
 * cap meets them, on the real service over the backends given (two instances sharing them): a
 * background turn or response retried is its duplicate whether the tenant is at the cap or not,
 * recording nothing again, and the key with another request is 422 at once.
 */
export function describePendingCapRetries(label: string, open: () => Promise<CapBackends>) {
  describe(`keyed retries of work that ran, at the pending-work cap (${label})`, () => {
    it('answers a keyed background turn retried after it ran as its duplicate, at the cap or not, recording nothing', async () => {
      const { a, b, model, close } = await deployment(open, 2)
      try {
        const { session_id } = await a.createSession('acme', {})
        const again = () =>
          b.queueTurn('acme', session_id, { input: 'build' }, { idempotencyKey: 'turn-k1' })
        const first = await a.queueTurn(
          'acme',
          session_id,
          { input: 'build' },
          { idempotencyKey: 'turn-k1' },
        )
        expect(first.duplicate).toBe(false)
        model.enqueue({ text: 'built' })
        const at = { tenant: 'acme', session_id, work_id: first.work_id }
        expect(await a.runWork(at)).toMatchObject({ outcome: 'done' })

        // Below the cap: its duplicate, and no record is written again.
        expect(await again()).toEqual({ ...first, duplicate: true })
        expect((await a.listWork()).items).toHaveLength(0)

        // At the cap: the same answer, never refused.
        await a.queueExec('acme', { prompt: 'fill 1' })
        await a.queueExec('acme', { prompt: 'fill 2' })
        expect(await again()).toEqual({ ...first, duplicate: true })
        const reused = b.queueTurn(
          'acme',
          session_id,
          { input: 'x' },
          { idempotencyKey: 'turn-k1' },
        )
        expect(await refusal(reused)).toBe('idempotency_key_reused')
        expect(await refusal(b.queueTurn('acme', session_id, { input: 'new' }))).toBe(
          'rate_limited',
        )
        expect((await a.listWork()).items).toHaveLength(2)
        expect(await a.workStatus('acme', session_id, first.work_id)).toMatchObject({
          state: 'done',
        })
        expect(model.requests).toHaveLength(1)
      } finally {
        await close()
      }
    })

    it('answers a keyed background response retried after it ran as its duplicate, at the cap or not, recording nothing', async () => {
      const { a, b, model, close } = await deployment(open, 2)
      try {
        const call = (input: unknown) => {
          const request = ResponsesRequestSchema.parse({ model: 'm', input, background: true })
          return { run: toResponseRun(request, 1_700_000_000), idempotencyKey: 'resp-k1' }
        }
        const first = await a.queueResponse('acme', call('summarize'))
        model.enqueue({ text: 'summed' })
        const at = { tenant: 'acme', session_id: first.session_id, work_id: first.work_id }
        expect(await a.runWork(at)).toMatchObject({ outcome: 'done' })

        // Below the cap: its duplicate, no record written again; another input is 422 now, not
        // a record that fails when it runs.
        expect(await b.queueResponse('acme', call('summarize'))).toEqual({
          ...first,
          duplicate: true,
        })
        expect((await a.listWork()).items).toHaveLength(0)
        expect(await refusal(b.queueResponse('acme', call('another')))).toBe(
          'idempotency_key_reused',
        )
        // The same last message after another earlier conversation is another input too.
        const earlier = [
          { role: 'user', content: 'earlier' },
          { role: 'assistant', content: 'noted' },
          { role: 'user', content: 'summarize' },
        ]
        expect(await refusal(b.queueResponse('acme', call(earlier)))).toBe('idempotency_key_reused')

        // At the cap: the same answers, never refused.
        await a.queueExec('acme', { prompt: 'fill 1' })
        await a.queueExec('acme', { prompt: 'fill 2' })
        expect(await b.queueResponse('acme', call('summarize'))).toEqual({
          ...first,
          duplicate: true,
        })
        const reused = b.queueResponse('acme', call('another'))
        expect(await refusal(reused)).toBe('idempotency_key_reused')
        expect(await refusal(b.queueResponse('acme', call(earlier)))).toBe('idempotency_key_reused')
        expect((await a.listWork()).items).toHaveLength(2)
        expect(await a.workStatus('acme', first.session_id, first.work_id)).toMatchObject({
          state: 'done',
        })
        expect(model.requests).toHaveLength(1)
      } finally {
        await close()
      }
    })
    it('answers a keyed background turn retried after 16 newer turns as its duplicate, recording nothing', async () => {
      const { a, b, model, close } = await deployment(open, 2)
      try {
        const { session_id } = await a.createSession('acme', {})
        const again = (input = 'build') =>
          b.queueTurn('acme', session_id, { input }, { idempotencyKey: 'turn-old' })
        const first = await again()
        model.enqueue({ text: 'built' })
        const at = { tenant: 'acme', session_id, work_id: first.work_id }
        expect(await a.runWork(at)).toMatchObject({ outcome: 'done' })
        // Sixteen keyed turns after it: its key is no longer among the session's recent turns.
        for (let turn = 0; turn < 16; turn++) {
          model.enqueue({ text: `done ${turn}` })
          const keyed = { idempotencyKey: `newer-${turn}` }
          await a.stepTurn('acme', session_id, { input: `next ${turn}` }, keyed)
        }

        // Below the cap: its duplicate, nothing recorded (a record, duplicate: false before).
        expect(await again()).toEqual({ ...first, duplicate: true })
        expect((await a.listWork()).items).toHaveLength(0)
        expect(await refusal(again('other'))).toBe('idempotency_key_reused')
        // At the cap: the same (429 before).
        await a.queueExec('acme', { prompt: 'fill 1' })
        await a.queueExec('acme', { prompt: 'fill 2' })
        expect(await again()).toEqual({ ...first, duplicate: true })
        expect((await a.listWork()).items).toHaveLength(2)
        expect(model.requests).toHaveLength(17)
      } finally {
        await close()
      }
    })

    it('answers a keyed background turn whose turn ends between its check and its write as its duplicate', async () => {
      const { a, b, model, held, close } = await deployment(open, 3)
      try {
        const { session_id } = await a.createSession('acme', {})
        const again = () =>
          b.queueTurn('acme', session_id, { input: 'build' }, { idempotencyKey: 'turn-race' })
        const first = await again()
        // The retry has checked the session (the turn not run yet) and is about to write.
        const write = gate()
        let writing = false
        held.beforeCreate(async () => {
          held.beforeCreate(undefined)
          writing = true
          await write.promise
        })
        const retry = again()
        await until('the retry at its write', () => writing || undefined)
        model.enqueue({ text: 'built' })
        const at = { tenant: 'acme', session_id, work_id: first.work_id }
        expect(await a.runWork(at)).toMatchObject({ outcome: 'done' })
        write.open()

        // Its duplicate, nothing left recorded (duplicate: false and a record again before).
        expect(await retry).toEqual({ ...first, duplicate: true })
        expect((await a.listWork()).items).toHaveLength(0)
        expect(model.requests).toHaveLength(1)
      } finally {
        await close()
      }
    })

    it('keeps the place of a same-named request still writing when the first one’s write fails', async () => {
      const { a, b, held, close } = await deployment(open, 2)
      try {
        const { session_id } = await a.createSession('acme', {})
        await a.queueExec('acme', { prompt: 'fill' })
        const send = (service: typeof a) =>
          service.queueTurn('acme', session_id, { input: 'build' }, { idempotencyKey: 'twice' })
        const first = gate()
        const second = gate()
        let writes = 0
        held.beforeCreate(async () => {
          writes++
          if (writes === 1) {
            await first.promise
            throw new Error('the store failed this write')
          }
          if (writes === 2) await second.promise
        })
        const failing = send(a).catch((error: unknown) => error)
        await until('the first at its write', () => writes === 1 || undefined)
        const writing = send(b)
        await until('the second at its write', () => writes === 2 || undefined)
        first.open()
        expect(await failing).toBeInstanceOf(Error)

        // The second still holds the name's place: the tenant is full (the next taken before).
        expect(await refusal(a.queueExec('acme', { prompt: 'over' }))).toBe('rate_limited')
        second.open()
        expect((await writing).duplicate).toBe(false)
        expect((await a.listWork()).items).toHaveLength(2)
      } finally {
        held.beforeCreate(undefined)
        await close()
      }
    })
  })
}
