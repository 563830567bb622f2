import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { verifyStandardWebhook } from '../../src/contract/standard-webhooks.ts'
import { sweepCallbacks } from '../../src/core/callbacks/callback-sweep.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { acceptingReceiver, callbackEngine, workAt } from '../support/callback-engine.ts'
import { SimulatedCrash } from '../support/crashing-object-store.ts'
import { testClock } from '../support/test-clock.ts'

/**
 * `loop.stopped` of a run that stops before any step has a session (paused before its first
 * step), on the real engine and a memory store: recorded in the loop's own outbox, keyed by its
 * run, delivered once by the sweep — also when the worker dies after recording it and before
 * saving the run stopped (run again, it records the same objects, the same `webhook-id`).
 */
const SECRET = 'loop-stop-secret'
const URL = 'https://hooks.example.com/loops'

/** A store whose first save of the loop's state after `armed` "kills" the writer. */
function crashOnLoopSave(inner: ObjectStore) {
  const state = { armed: false, crashed: false }
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: async (key, body, options) => {
      if (state.armed && !state.crashed && /\/state\/loop-[^/]+\.json$/.test(key)) {
        state.crashed = true
        throw new SimulatedCrash(`crash before ${key}`)
      }
      return inner.put(key, body, options)
    },
  }
  return { store, state }
}

describe('loop.stopped before the first step', () => {
  it('is recorded in the loop, delivered once, also after a crash between recording and saving', async () => {
    const memory = new MemoryObjectStore()
    const clock = testClock(Date.now())
    const target = acceptingReceiver()
    const crashing = crashOnLoopSave(memory)
    const first = callbackEngine(crashing.store, clock, target.fetch, SECRET)
    await first.service.createLoop('acme', {
      loop_id: 'early',
      task: 'Tidy one file.',
      session: { callback: { url: URL } },
      budget: { max_steps: 5, max_tokens: 1_000_000, max_cost_usd: 10 },
    })
    const run = await first.service.runLoop('acme', 'early', { trigger: 'api' })
    await first.service.stepLoop('acme', 'early', { control: 'pause' })
    crashing.state.armed = true
    // The notice is recorded, then the worker dies before the run is saved stopped.
    expect(await first.service.runWork(workAt('acme', run.work))).toMatchObject({
      outcome: 'retry',
    })
    expect(crashing.state.crashed).toBe(true)
    const second = callbackEngine(memory, clock, target.fetch, SECRET)
    const loop = { tenant: 'acme', workspace: run.loop.workspace, loopId: 'early' }
    expect((await second.ctx.outbox.loopDeliveries(loop)).map((d) => d.record.type)).toEqual([
      'loop.stopped',
    ])
    expect(await second.service.runWork(workAt('acme', run.work))).toMatchObject({
      outcome: 'done',
    })
    expect(await second.service.getLoop('acme', 'early')).toMatchObject({
      step_index: 0,
      run: { state: 'stopped', stop_reason: 'paused' },
    })
    expect(second.model.requests).toHaveLength(0)

    await sweepCallbacks(second.ctx, second.sessions)
    await sweepCallbacks(second.ctx, second.sessions)
    expect(target.got).toHaveLength(1)
    const request = target.got[0] as Request
    const body = await request.text()
    expect(verifyStandardWebhook({ secret: SECRET, headers: request.headers, body }).ok).toBe(true)
    const listed = await second.service.listLoopDeliveries('acme', 'early')
    expect(listed.deliveries).toHaveLength(1)
    expect(listed.deliveries[0]).toMatchObject({
      id: request.headers.get('webhook-id'),
      type: 'loop.stopped',
      state: 'delivered',
    })
    const notice = JSON.parse(body)
    expect(notice).toMatchObject({
      type: 'loop.stopped',
      data: {
        status: 'terminal',
        loop: { loop_id: 'early', run_id: run.loop.run?.run_id, reason: 'paused', step_index: 0 },
      },
    })
    expect(notice.data.session_id).toBeUndefined()
    expect(await second.ctx.outbox.markers()).toEqual([])
  })
})
