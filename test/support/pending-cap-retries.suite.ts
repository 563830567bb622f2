import { describe, expect, it } from 'vitest'
import { ResponsesRequestSchema } from '../../src/contract/open-responses-request.ts'
import { toResponseRun } from '../../src/contract/open-responses-run.ts'
import { type CapBackends, deployment, refusal } from './pending-cap.suite.ts'

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
  })
}
