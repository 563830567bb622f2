import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CallbackEventType } from '../../src/contract/callback-delivery.ts'
import { CallbackOutbox } from '../../src/core/callbacks/callback-outbox.ts'
import type { CallbackContext } from '../../src/core/callbacks/callback-sender.ts'
import { sweepCallbacks } from '../../src/core/callbacks/callback-sweep.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { testCallbackPolicy } from '../support/callback-policy.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * The callbacks' outbox on S3 (moto_server, whose conditional writes behave as AWS's): three
 * instances sweeping the same bucket at once, each with its own client, send every notice once —
 * the claims are compare-and-swap writes, and only one of the racing claims of a record wins.
 * The next sweep drops the markers of what is finished and sends nothing again. A `work.failed`
 * notice recorded twice (a worker that died after recording it, before retiring its work, and
 * the worker that ran the work again) is one record, sent once.
 */
const SECRET = 'callback-s3-contract-secret'
const services = requireServices()
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let receiver: Awaited<ReturnType<typeof startHookReceiver>>

beforeAll(async () => {
  bucket = await createTestBucket(services.s3, 'callbacks')
  receiver = await startHookReceiver(SECRET)
})

afterAll(async () => {
  await receiver?.close()
  await bucket?.destroy()
})

function instance(owner: string): { ctx: CallbackContext; sessions: SessionStore } {
  const sessions = new SessionStore({ store: bucket.store('deploy') })
  return {
    sessions,
    ctx: {
      outbox: new CallbackOutbox(sessions),
      policy: testCallbackPolicy((input, init) => fetch(input, init), owner, SECRET, {
        allowHttp: true,
        // Generous: an attempt cut by its deadline on a loaded machine is retried (at least once,
        // the same id) and would be counted twice here, which is not what these cases are about.
        timeoutMs: 30_000,
        claimMarginMs: 30_000,
        markerGraceMs: 60_000,
      }),
      clock: systemClock,
      log: () => {},
    },
  }
}

describe('callback outbox on S3', () => {
  it('sends each notice once when three instances sweep at the same time', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map(instance) as [
      ReturnType<typeof instance>,
      ReturnType<typeof instance>,
      ReturnType<typeof instance>,
    ]
    const url = receiver.url('/hooks')
    const now = Date.now()
    for (let n = 0; n < 4; n++) {
      const ref = { tenant: 'acme', workspace: 'default', sessionId: `ses_s3_${n}` }
      const types: CallbackEventType[] = ['turn.completed', 'thread.completed']
      await a.ctx.outbox.mark(ref, 1, url, now)
      await a.ctx.outbox.record(
        ref,
        1,
        types.map((type, i) => ({
          type,
          notice: {
            type,
            timestamp: new Date(now).toISOString(),
            data: { session_id: ref.sessionId, status: 'terminal', seq: 3 + i, events_url: '/e' },
          },
        })),
        url,
        now,
      )
    }
    await Promise.all([a, b, c].map((i) => sweepCallbacks(i.ctx, i.sessions)))

    const ids = receiver.received.map((hook) => String(hook.headers['webhook-id']))
    expect(ids).toHaveLength(8)
    expect(new Set(ids).size).toBe(8)
    expect(receiver.received.every((hook) => hook.signatureValid)).toBe(true)
    // A batch whose records two instances shared is finished by the next sweep: nothing resent.
    await sweepCallbacks(c.ctx, c.sessions)
    expect(receiver.received).toHaveLength(8)
    expect(await a.ctx.outbox.markers()).toEqual([])
    for (let n = 0; n < 4; n++) {
      const ref = { tenant: 'acme', workspace: 'default', sessionId: `ses_s3_${n}` }
      const stored = await b.ctx.outbox.deliveries(ref)
      expect(stored.map((d) => [d.record.type, d.record.state, d.record.attempts.length])).toEqual([
        ['turn.completed', 'delivered', 1],
        ['thread.completed', 'delivered', 1],
      ])
    }
  })

  it("sends a work's work.failed once when it was recorded twice (a crash's redo) and three instances sweep", async () => {
    const [a, b, c] = ['d', 'e', 'f'].map(instance) as [
      ReturnType<typeof instance>,
      ReturnType<typeof instance>,
      ReturnType<typeof instance>,
    ]
    const url = receiver.url('/work-hooks')
    const before = receiver.received.length
    const works = ['1', '2', '3'].map((n) => n.repeat(32))
    const ref = { tenant: 'acme', workspace: 'default', sessionId: 'ses_s3_work' }
    for (const workId of works) {
      for (const [i, writer] of [a, b].entries()) {
        const now = Date.now() + i
        const notice = {
          type: 'work.failed' as const,
          timestamp: new Date(now).toISOString(),
          data: { session_id: ref.sessionId, status: 'failed' as const, seq: 0, events_url: '/e' },
        }
        await writer.ctx.outbox.recordKeyed(
          ref,
          { key: workId, workId, batch: 0, draft: { type: 'work.failed', notice } },
          url,
          now,
        )
      }
    }
    await Promise.all([a, b, c].map((i) => sweepCallbacks(i.ctx, i.sessions)))
    await sweepCallbacks(c.ctx, c.sessions)
    const got = receiver.received.slice(before)
    expect(got).toHaveLength(3)
    expect(got.every((hook) => hook.signatureValid && hook.path === '/work-hooks')).toBe(true)
    const stored = await b.ctx.outbox.deliveries(ref)
    expect(stored.map((d) => [d.record.work_id, d.record.state, d.record.attempts.length])).toEqual(
      works.map((work) => [work, 'delivered', 1]),
    )
    expect(new Set(got.map((hook) => String(hook.headers['webhook-id'])))).toEqual(
      new Set(stored.map((d) => d.record.id)),
    )
    expect(await a.ctx.outbox.markers()).toEqual([])
  })
})
