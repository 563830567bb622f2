import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { verifyStandardWebhook } from '../../src/contract/standard-webhooks.ts'
import { CallbackOutbox } from '../../src/core/callbacks/callback-outbox.ts'
import type { CallbackContext } from '../../src/core/callbacks/callback-sender.ts'
import { sweepCallbacks } from '../../src/core/callbacks/callback-sweep.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { callbackEngine } from '../support/callback-engine.ts'
import { testCallbackPolicy } from '../support/callback-policy.ts'
import { SimulatedCrash } from '../support/crashing-object-store.ts'
import { type TestClock, testClock } from '../support/test-clock.ts'

/**
 * The outbox on the real engine and a memory store, with a test clock: what a crash between the
 * commit and recording the notices leaves is recovered by the sweep, retries follow the backoff
 * and stop after the give-up time, and two instances sweeping at once send a delivery once.
 */
const SECRET = 'callback-unit-secret'
const URL = 'https://hooks.example.com/turnline'

type Reply = number | 'hang'

/** A receiver behind `fetch`: answers each request by the script, records what it got. */
function receiver(script: (n: number) => Reply) {
  const got: Request[] = []
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init)
    got.push(request)
    const reply = script(got.length - 1)
    if (reply === 'hang') {
      return new Promise<Response>((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
      )
    }
    return new Response('{}', { status: reply })
  }) as typeof fetch
  return { got, fetch: fetchImpl }
}

function context(store: ObjectStore, clock: TestClock, fetchImpl: typeof fetch, owner: string) {
  const sessions = new SessionStore({ store })
  const ctx: CallbackContext = {
    outbox: new CallbackOutbox(sessions),
    policy: testCallbackPolicy(fetchImpl, owner, SECRET),
    clock,
    log: () => {},
  }
  return { ctx, sessions }
}

/** A store whose delivery records cannot be written: the writer "dies" after its commit. */
function noRecords(inner: ObjectStore): ObjectStore {
  return {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: async (key, body, options) => {
      if (/\/callbacks\/\d{10}-/.test(key)) throw new SimulatedCrash(`crash before ${key}`)
      return inner.put(key, body, options)
    },
  }
}

describe('callback outbox', () => {
  it('records and delivers the notices of a batch whose writer died after the commit', async () => {
    const store = new MemoryObjectStore()
    // Now: the receiver's check holds the signed timestamp to five minutes of its own clock.
    const clock = testClock(Date.now())
    const target = receiver(() => 200)
    const first = callbackEngine(noRecords(store), clock, target.fetch, SECRET)
    const { session_id } = await first.service.createSession('acme', { callback: { url: URL } })
    first.model.enqueue({ text: 'done' })
    const turn = await first.service.stepTurn(
      'acme',
      session_id,
      { input: 'go' },
      { idempotencyKey: 'order-42' },
    )
    expect(turn.status).toBe('completed')
    expect(target.got).toHaveLength(0)

    const { ctx, sessions } = context(store, clock, target.fetch, 'b')
    await sweepCallbacks(ctx, sessions)
    expect(target.got).toHaveLength(1)
    const request = target.got[0] as Request
    const body = await request.text()
    expect(verifyStandardWebhook({ secret: SECRET, headers: request.headers, body })).toMatchObject(
      {
        ok: true,
      },
    )
    expect(JSON.parse(body)).toMatchObject({
      type: 'turn.completed',
      data: {
        session_id,
        turn_id: turn.turn_id,
        status: 'completed',
        result: 'done',
        // recovered from the committed batch: the key of the call that committed it
        idempotency_key: 'order-42',
      },
    })
    // finished: the marker is gone and a second sweep sends nothing
    expect(await ctx.outbox.markers()).toEqual([])
    await sweepCallbacks(ctx, sessions)
    expect(target.got).toHaveLength(1)
    const [delivery] = await ctx.outbox.deliveries({
      tenant: 'acme',
      workspace: 'default',
      sessionId: session_id,
    })
    expect(delivery?.record).toMatchObject({ state: 'delivered', attempts: [{ status_code: 200 }] })
  })

  it('recovers a notice from the state folded up to its batch, not from the batch alone', async () => {
    // Batch version 6 holds only the state fields a batch changed: every turn below answers the
    // same text, so its batch does not write last_assistant_text, and the batches after 16 are
    // folded over the checkpoint.
    const store = new MemoryObjectStore()
    const clock = testClock(Date.now())
    const target = receiver(() => 200)
    const first = callbackEngine(noRecords(store), clock, target.fetch, SECRET)
    const { session_id } = await first.service.createSession('acme', { callback: { url: URL } })
    const turns: string[] = []
    for (let n = 1; n <= 18; n++) {
      first.model.enqueue({ text: 'done' })
      const turn = await first.service.stepTurn('acme', session_id, { input: `go ${n}` })
      expect(turn.status).toBe('completed')
      turns.push(turn.turn_id)
    }
    const root = `acme/default/.vtcode/sessions/${session_id}/`
    expect((await store.list(`${root}state/`)).objects.length).toBeGreaterThan(0)
    const { ctx, sessions } = context(store, clock, target.fetch, 'b')
    await sweepCallbacks(ctx, sessions)
    const notices = await Promise.all(target.got.map(async (r) => JSON.parse(await r.text())))
    expect(notices.map((n) => n.data.turn_id).sort()).toEqual([...turns].sort())
    for (const notice of notices) {
      expect(notice).toMatchObject({ type: 'turn.completed', data: { result: 'done' } })
    }
  })

  it("reports a webhook hook's run: its turn and its thread's end, from its session settings", async () => {
    const store = new MemoryObjectStore()
    const clock = testClock(Date.now())
    const target = receiver(() => 200)
    const run = callbackEngine(store, clock, target.fetch, SECRET)
    run.model.enqueue({ text: 'triaged' })
    await run.service.trigger('acme', {
      sessionId: 'ses_hook_1',
      deliveryId: 'msg_delivery_1',
      config: { callback: { url: URL } },
      input: 'an issue was opened',
    })
    const { ctx, sessions } = context(store, clock, target.fetch, 'b')
    await sweepCallbacks(ctx, sessions)
    const bodies = await Promise.all(target.got.map(async (r) => JSON.parse(await r.text())))
    expect(bodies.map((b) => [b.type, b.data.status])).toEqual([
      ['turn.completed', 'terminal'],
      ['thread.completed', 'terminal'],
    ])
    expect(bodies[1].data).toMatchObject({ session_id: 'ses_hook_1', result: 'triaged' })
  })

  it('drops the marker of a commit that never happened once its grace has passed', async () => {
    const store = new MemoryObjectStore()
    const clock = testClock()
    const target = receiver(() => 200)
    const { ctx, sessions } = context(store, clock, target.fetch, 'a')
    const ref = { tenant: 'acme', workspace: 'default', sessionId: 'ses_never' }
    await ctx.outbox.mark(ref, 3, URL, clock.now())
    expect((await sweepCallbacks(ctx, sessions)).nextDueAt).toBe(clock.now() + 10_000)
    expect(await ctx.outbox.markers()).toHaveLength(1)
    await clock.advance(10_000)
    await sweepCallbacks(ctx, sessions)
    expect(await ctx.outbox.markers()).toEqual([])
    expect(target.got).toHaveLength(0)
  })

  it('retries with exponential backoff under one webhook-id, then gives up after the limit', async () => {
    const store = new MemoryObjectStore()
    const clock = testClock()
    const target = receiver((n) => (n === 1 ? 'hang' : 503))
    const { ctx, sessions } = context(store, clock, target.fetch, 'a')
    const ref = { tenant: 'acme', workspace: 'default', sessionId: 'ses_retry' }
    const notice = {
      type: 'turn.failed' as const,
      timestamp: new Date(clock.now()).toISOString(),
      data: { session_id: 'ses_retry', status: 'failed' as const, seq: 4, events_url: '/e' },
    }
    await ctx.outbox.mark(ref, 1, URL, clock.now())
    await ctx.outbox.record(ref, 1, [{ type: 'turn.failed', notice }], URL, clock.now())
    const waits: number[] = []
    for (;;) {
      const before = clock.now()
      const sweep = sweepCallbacks(ctx, sessions)
      if (target.got.length === 1) await clock.advance(1000) // the hanging attempt's deadline
      const { nextDueAt } = await sweep
      if (nextDueAt === undefined) break
      waits.push(nextDueAt - before)
      await clock.advance(nextDueAt - clock.now())
    }
    const [stored] = await ctx.outbox.deliveries(ref)
    expect(stored?.record.state).toBe('failed')
    expect(stored?.record.reason).toMatch(/^gave up after \d+ attempts$/)
    expect(stored?.record.attempts[1]?.error).toBe('no answer within 1000 ms')
    expect(new Set(target.got.map((r) => r.headers.get('webhook-id')))).toEqual(
      new Set([stored?.record.id]),
    )
    // 1 s doubling to the 8 s cap, spread ±25 %; the last attempt came before the 60 s limit
    expect(waits[0]).toBeGreaterThanOrEqual(750)
    expect(waits[0]).toBeLessThanOrEqual(1250)
    expect(Math.max(...waits)).toBeLessThanOrEqual(10_000 + 1000)
    const last = Date.parse(stored?.record.attempts.at(-1)?.at ?? '')
    expect(last - Date.parse(stored?.record.created_at ?? '')).toBeLessThanOrEqual(60_000)
    expect(await ctx.outbox.markers()).toEqual([])
  })

  it('sends a delivery once when two instances sweep at the same time', async () => {
    const store = new MemoryObjectStore()
    const clock = testClock()
    const target = receiver(() => 200)
    const a = context(store, clock, target.fetch, 'a')
    const b = context(store, clock, target.fetch, 'b')
    const ref = { tenant: 'acme', workspace: 'default', sessionId: 'ses_race' }
    const notice = {
      type: 'thread.completed' as const,
      timestamp: new Date(clock.now()).toISOString(),
      data: { session_id: 'ses_race', status: 'terminal' as const, seq: 9, events_url: '/e' },
    }
    await a.ctx.outbox.mark(ref, 5, URL, clock.now())
    await a.ctx.outbox.record(ref, 5, [{ type: 'thread.completed', notice }], URL, clock.now())
    await Promise.all([sweepCallbacks(a.ctx, a.sessions), sweepCallbacks(b.ctx, b.sessions)])
    expect(target.got).toHaveLength(1)
  })
})
