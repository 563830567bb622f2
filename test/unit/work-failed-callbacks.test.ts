import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { tenantAdmission } from '../../functions/tenancy/tenant-admission.ts'
import { verifyStandardWebhook } from '../../src/contract/standard-webhooks.ts'
import { CallbackOutbox } from '../../src/core/callbacks/callback-outbox.ts'
import type { CallbackContext } from '../../src/core/callbacks/callback-sender.ts'
import { sweepCallbacks } from '../../src/core/callbacks/callback-sweep.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { acceptingReceiver, workAt } from '../support/callback-engine.ts'
import { testCallbackPolicy } from '../support/callback-policy.ts'
import { SimulatedCrash } from '../support/crashing-object-store.ts'
import { engineDeps } from '../support/engine-deps.ts'
import { ScriptedModelClient } from '../support/scripted-model.ts'
import { type TestClock, testClock } from '../support/test-clock.ts'

/**
 * `work.failed` on the real engine and a memory store, with a test clock: background work that
 * never had a turn to report it — it waited for its tenant's daily quota (the real admission on
 * a memory limiter, a quota of 0) until its maximum age, or was refused when it ran — sends one
 * notice keyed by its work id, and a worker that dies after recording it and before retiring the
 * record records the same notice again (same `webhook-id`), so the receiver accepts it once.
 */
const SECRET = 'work-failed-secret'
const URL = 'https://hooks.example.com/work'
const MAX_AGE_MS = 10_000

function engine(store: ObjectStore, clock: TestClock, fetchImpl: typeof fetch, quota?: number) {
  const model = new ScriptedModelClient()
  const deps = engineDeps(
    {
      store,
      model,
      fetch: fetchImpl,
      clock,
      defaults: { quotaWait: { retryMaxMs: 1000, maxAgeMs: MAX_AGE_MS } },
    },
    [],
  )
  const admission = tenantAdmission({
    limiter: new MemoryTenantLimiter(),
    defaults: quota === undefined ? {} : { tokensPerDay: quota },
    slotTtlMs: 60_000,
    reservationTtlMs: 60_000,
    defaultOutputTokens: 1000,
    clock,
  })
  const sessions = new SessionStore({ store })
  const callbacks = {
    outbox: new CallbackOutbox(sessions),
    policy: testCallbackPolicy(fetchImpl, 'a', SECRET),
  }
  const service = new SessionService({ ...deps, admission, sessions, callbacks })
  const ctx: CallbackContext = { ...callbacks, clock, log: () => {} }
  return { model, service, ctx, sessions }
}

/** A store whose first write of a retired (failed) work record "kills" the writer. */
function crashOnRetire(inner: ObjectStore): ObjectStore {
  let crashed = false
  return {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: async (key, body, options) => {
      if (!crashed && key.includes('/work/failed/')) {
        crashed = true
        throw new SimulatedCrash(`crash before ${key}`)
      }
      return inner.put(key, body, options)
    },
  }
}

describe('work.failed callbacks', () => {
  it('reports work that waited for the quota until its maximum age, once, across a crash', async () => {
    const store = new MemoryObjectStore()
    const clock = testClock(Date.now())
    const target = acceptingReceiver()
    const first = engine(crashOnRetire(store), clock, target.fetch, 0)
    const { session_id } = await first.service.createSession('acme', { callback: { url: URL } })
    const work = await first.service.queueTurn(
      'acme',
      session_id,
      { input: 'later' },
      { idempotencyKey: 'quota-expiry' },
    )
    expect(await first.service.runWork(workAt('acme', work))).toMatchObject({ outcome: 'busy' })
    expect(await first.service.workStatus('acme', session_id, work.work_id)).toMatchObject({
      state: 'waiting',
    })
    await clock.advance(MAX_AGE_MS + 1)
    // The notice is recorded, then the worker dies before the record is retired.
    await expect(first.service.runWork(workAt('acme', work))).rejects.toBeInstanceOf(SimulatedCrash)
    const second = engine(store, clock, target.fetch, 0)
    const ref = { tenant: 'acme', workspace: 'default', sessionId: session_id }
    const recorded = await second.ctx.outbox.deliveries(ref)
    expect(recorded.map((d) => d.record.type)).toEqual(['work.failed'])
    expect(await second.service.runWork(workAt('acme', work))).toMatchObject({
      outcome: 'failed',
      error: { code: 'quota_exceeded', message: expect.stringMatching(/^expired: /) },
    })
    expect(await second.service.workStatus('acme', session_id, work.work_id)).toMatchObject({
      state: 'failed',
      error: { code: 'quota_exceeded' },
    })
    expect((await second.service.listWork()).items).toEqual([])

    await sweepCallbacks(second.ctx, second.sessions)
    await sweepCallbacks(second.ctx, second.sessions)
    expect(target.got).toHaveLength(1)
    const request = target.got[0] as Request
    const body = await request.text()
    expect(verifyStandardWebhook({ secret: SECRET, headers: request.headers, body }).ok).toBe(true)
    const [delivery] = await second.ctx.outbox.deliveries(ref)
    expect(request.headers.get('webhook-id')).toBe(delivery?.record.id)
    expect(delivery?.record).toMatchObject({
      type: 'work.failed',
      state: 'delivered',
      work_id: work.work_id,
    })
    expect(JSON.parse(body)).toMatchObject({
      type: 'work.failed',
      data: {
        session_id,
        status: 'failed',
        message: expect.stringMatching(/^quota_exceeded: expired: /),
        work: {
          work_id: work.work_id,
          source: 'turns',
          code: 'quota_exceeded',
          attempts: 0,
          message: expect.stringMatching(/daily quota until its maximum age/),
        },
      },
    })
    expect(JSON.parse(body).data.turn_id).toBeUndefined()
    expect(await second.ctx.outbox.markers()).toEqual([])
  })

  it('reports work refused when it runs (its session completed meanwhile), separately per work', async () => {
    const store = new MemoryObjectStore()
    const clock = testClock(Date.now())
    const target = acceptingReceiver()
    const run = engine(store, clock, target.fetch)
    const { session_id } = await run.service.createSession('acme', { callback: { url: URL } })
    const works = []
    for (const key of ['one', 'two']) {
      works.push(
        await run.service.queueTurn('acme', session_id, { input: key }, { idempotencyKey: key }),
      )
    }
    await run.service.complete('acme', session_id)
    for (const work of works) {
      expect(await run.service.runWork(workAt('acme', work))).toMatchObject({
        outcome: 'failed',
        error: { code: 'session_completed' },
      })
    }
    await sweepCallbacks(run.ctx, run.sessions)
    const bodies = await Promise.all(target.got.map(async (r) => JSON.parse(await r.text())))
    const failed = bodies.filter((b) => b.type === 'work.failed')
    expect(failed.map((b) => b.data.work.work_id).sort()).toEqual(
      works.map((w) => w.work_id).sort(),
    )
    expect(new Set(target.got.map((r) => r.headers.get('webhook-id'))).size).toBe(target.got.length)
    expect(run.model.requests).toHaveLength(0)
  })

  it("reports a loop's background step refused when it runs, in the newest step session", async () => {
    const store = new MemoryObjectStore()
    const clock = testClock(Date.now())
    const target = acceptingReceiver()
    const run = engine(store, clock, target.fetch)
    await run.service.createLoop('acme', {
      loop_id: 'tidy',
      task: 'Tidy one file.',
      session: { callback: { url: URL } },
      budget: { max_steps: 5, max_tokens: 1_000_000, max_cost_usd: 10 },
    })
    run.model.enqueue({ text: 'step 0' })
    await run.service.stepLoop('acme', 'tidy', {})
    const work = await run.service.queueLoopStep('acme', 'tidy', {}, { idempotencyKey: 'step-1' })
    await run.service.stepLoop('acme', 'tidy', { control: 'pause' })
    expect(await run.service.runWork(workAt('acme', work))).toMatchObject({
      outcome: 'failed',
      error: { code: 'conflict' },
    })
    await sweepCallbacks(run.ctx, run.sessions)
    const bodies = await Promise.all(target.got.map(async (r) => JSON.parse(await r.text())))
    const failed = bodies.filter((b) => b.type === 'work.failed')
    expect(failed).toHaveLength(1)
    expect(failed[0].data).toMatchObject({
      session_id: 'tidy-step-0',
      status: 'failed',
      work: { work_id: work.work_id, source: 'loops', loop_id: 'tidy', code: 'conflict' },
    })
    expect(run.model.requests).toHaveLength(1)
  })

  it('fails a corrupt record once, saying so, and never wakes it again', async () => {
    const store = new MemoryObjectStore()
    const clock = testClock(Date.now())
    const target = acceptingReceiver()
    const run = engine(store, clock, target.fetch)
    const { session_id } = await run.service.createSession('acme', { callback: { url: URL } })
    const work = await run.service.queueTurn(
      'acme',
      session_id,
      { input: 'x' },
      { idempotencyKey: 'corrupt' },
    )
    const [pending] = (await store.list('')).objects.filter((o) => o.key.includes('/work/pending/'))
    await store.put(pending?.key ?? '', new TextEncoder().encode('{"format":"turnline.work"'))
    expect(await run.service.runWork(workAt('acme', work))).toMatchObject({
      outcome: 'failed',
      error: { code: 'corrupt_data' },
    })
    expect((await run.service.listWork()).items).toEqual([])
    expect(await run.service.runWork(workAt('acme', work))).toEqual({ outcome: 'gone' })
    await expect(run.service.workStatus('acme', session_id, work.work_id)).rejects.toMatchObject({
      code: 'corrupt_data',
    })
    await sweepCallbacks(run.ctx, run.sessions)
    expect(target.got).toHaveLength(1)
    expect(JSON.parse(await (target.got[0] as Request).text())).toMatchObject({
      type: 'work.failed',
      data: { session_id, work: { work_id: work.work_id, code: 'corrupt_data', attempts: 0 } },
    })
    expect(run.model.requests).toHaveLength(0)
  })

  it("names a background turn's Idempotency-Key in its turn notices (its 202's idempotency_key)", async () => {
    const store = new MemoryObjectStore()
    const clock = testClock(Date.now())
    const target = acceptingReceiver()
    const run = engine(store, clock, target.fetch)
    const { session_id } = await run.service.createSession('acme', { callback: { url: URL } })
    const work = await run.service.queueTurn('acme', session_id, { input: 'x' })
    run.model.enqueue({ text: 'ran' })
    expect(await run.service.runWork(workAt('acme', work))).toMatchObject({ outcome: 'done' })
    run.model.enqueue({ text: 'in the foreground' })
    await run.service.stepTurn('acme', session_id, { input: 'y' })
    await sweepCallbacks(run.ctx, run.sessions)
    const bodies = await Promise.all(target.got.map(async (r) => JSON.parse(await r.text())))
    expect(bodies.map((b) => [b.type, b.data.idempotency_key])).toEqual([
      ['turn.completed', work.idempotency_key],
      ['turn.completed', undefined],
    ])
  })
})
