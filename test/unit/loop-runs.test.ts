import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { WorkLocation } from '../../src/contract/work-record.ts'
import { ENTRY_GRACE_MS } from '../../src/core/background/entry-grace.ts'
import { CallbackOutbox } from '../../src/core/callbacks/callback-outbox.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { cronMatches, latestCronSlot, parseCron } from '../../src/shared/cron-expression.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { testCallbackPolicy } from '../support/callback-policy.ts'
import { SimulatedCrash } from '../support/crashing-object-store.ts'
import { engineDeps } from '../support/engine-deps.ts'
import { ScriptedModelClient } from '../support/scripted-model.ts'
import { testClock } from '../support/test-clock.ts'

/**
 * Loop runs on the real engine and a memory store: a run steps the loop, one background record
 * a step, until the loop's own end (its budget, a pause) and says why it stopped, in the loop and
 * in a `loop.stopped` callback; a record run again after its step ran runs nothing twice; a
 * schedule starts one run per due slot.
 */
const URL = 'https://hooks.example.com/loops'

function engine(store: ObjectStore = new MemoryObjectStore()) {
  const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30))
  const model = new ScriptedModelClient()
  const fetchImpl = (async () => new Response('{}')) as unknown as typeof fetch
  const deps = engineDeps({ store, model, fetch: fetchImpl, clock }, [])
  const sessions = new SessionStore({ store })
  const outbox = new CallbackOutbox(sessions)
  const callbacks = { outbox, policy: testCallbackPolicy(fetchImpl, 'a', 'secret') }
  return { model, clock, outbox, service: new SessionService({ ...deps, sessions, callbacks }) }
}

/** Runs records as a worker would, each run's `next` at once, until none is left. */
async function drain(service: SessionService, first: WorkLocation | undefined): Promise<number> {
  let at = first
  let runs = 0
  while (at) {
    const result = await service.runWork(at)
    runs++
    at = result.outcome === 'done' ? result.next : undefined
  }
  return runs
}

const location = (tenant: string, work: { session_id: string; work_id: string }) => ({
  tenant,
  session_id: work.session_id,
  work_id: work.work_id,
})

const loopBody = (loopId: string, maxSteps: number) => ({
  loop_id: loopId,
  task: 'Tidy one file.',
  session: { callback: { url: URL } },
  budget: { max_steps: maxSteps, max_tokens: 1_000_000, max_cost_usd: 10 },
})

describe('a loop run', () => {
  it('steps the loop until its budget, once per step, and reports why it stopped', async () => {
    const { service, model, outbox } = engine()
    await service.createLoop('t1', loopBody('tidy', 3))
    model.enqueue({ text: 'step 0' }, { text: 'step 1' }, { text: 'step 2' })
    const run = await service.runLoop('t1', 'tidy', { trigger: 'api', idempotencyKey: 'k1' })
    expect(run).toMatchObject({
      duplicate: false,
      loop: { run: { state: 'running', first_step: 0 } },
    })
    const again = await service.runLoop('t1', 'tidy', { trigger: 'api' })
    expect(again).toMatchObject({ duplicate: true, work: { work_id: run.work.work_id } })

    expect(await drain(service, location('t1', run.work))).toBe(3)
    const loop = await service.getLoop('t1', 'tidy')
    expect(loop).toMatchObject({
      step_index: 3,
      status: 'paused',
      budget_status: 'step_limit_reached',
      run: { state: 'stopped', stop_reason: 'budget', trigger: 'api' },
    })
    expect(model.requests).toHaveLength(3)
    expect((await service.listWork()).items).toEqual([])

    const deliveries = await outbox.deliveries({
      tenant: 't1',
      workspace: loop.workspace,
      sessionId: 'tidy-step-2',
    })
    const stopped = deliveries.find((d) => d.record.type === 'loop.stopped')
    expect(JSON.parse(stopped?.record.body ?? '{}')).toMatchObject({
      type: 'loop.stopped',
      data: {
        session_id: 'tidy-step-2',
        loop: { loop_id: 'tidy', reason: 'budget', step_index: 3 },
      },
    })
    // The same key answers the same run, also after it stopped; a paused loop starts none.
    const retried = await service.runLoop('t1', 'tidy', { trigger: 'api', idempotencyKey: 'k1' })
    expect(retried).toMatchObject({
      duplicate: true,
      loop: { run: { run_id: run.loop.run?.run_id } },
    })
    await expect(service.runLoop('t1', 'tidy', { trigger: 'api' })).rejects.toMatchObject({
      code: 'conflict',
    })
  })

  it('stops after a pause without running another step', async () => {
    const { service, model } = engine()
    await service.createLoop('t1', loopBody('paused', 5))
    const run = await service.runLoop('t1', 'paused', { trigger: 'api' })
    await service.stepLoop('t1', 'paused', { control: 'pause' })
    expect(await drain(service, location('t1', run.work))).toBe(1)
    expect(model.requests).toHaveLength(0)
    expect(await service.getLoop('t1', 'paused')).toMatchObject({
      step_index: 0,
      run: { state: 'stopped', stop_reason: 'paused' },
    })
  })

  it('sends each run its own loop.stopped, also when two stop at the same session and batch', async () => {
    const { service, model, outbox } = engine()
    await service.createLoop('t1', loopBody('twice', 5))
    model.enqueue({ text: 'step 0' })
    const a = await service.runLoop('t1', 'twice', { trigger: 'api' })
    const first = await service.runWork(location('t1', a.work))
    await service.stepLoop('t1', 'twice', { control: 'pause' })
    expect(await drain(service, first.outcome === 'done' ? first.next : undefined)).toBe(1)
    await service.stepLoop('t1', 'twice', { control: 'resume' })
    // Paused before its first step: it stops at the same session, nothing committed since.
    const b = await service.runLoop('t1', 'twice', { trigger: 'api' })
    await service.stepLoop('t1', 'twice', { control: 'pause' })
    expect(await drain(service, location('t1', b.work))).toBe(1)
    expect(model.requests).toHaveLength(1)
    const loop = await service.getLoop('t1', 'twice')
    const ref = { tenant: 't1', workspace: loop.workspace, sessionId: 'twice-step-0' }
    const stopped = (await outbox.deliveries(ref)).filter((d) => d.record.type === 'loop.stopped')
    const runs = stopped.map((d) => JSON.parse(d.record.body).data.loop)
    expect(runs).toHaveLength(2)
    expect(new Set(runs.map((r) => r.run_id))).toEqual(
      new Set([a.loop.run?.run_id, b.loop.run?.run_id]),
    )
    expect(runs.every((r) => r.reason === 'paused')).toBe(true)
    expect(new Set(stopped.map((d) => d.record.id)).size).toBe(2)
  })

  it('never runs a step twice when its record runs again after the step ran (a crash before its removal)', async () => {
    const { service, model } = engine()
    await service.createLoop('t1', loopBody('crash', 2))
    const run = await service.runLoop('t1', 'crash', { trigger: 'api' })
    // The worker ran step 0 and died before its record was done: the step is in the loop.
    model.enqueue({ text: 'step 0' })
    await service.stepLoop('t1', 'crash', {})
    expect(model.requests).toHaveLength(1)
    // The sweep runs the record again: nothing is run for step 0, step 1 is recorded and run.
    model.enqueue({ text: 'step 1' })
    expect(await drain(service, location('t1', run.work))).toBe(2)
    expect(model.requests).toHaveLength(2)
    expect(await service.getLoop('t1', 'crash')).toMatchObject({
      step_index: 2,
      run: { state: 'stopped', stop_reason: 'budget' },
    })
  })

  it('is revived by the sweep when its instance died before recording its first step', async () => {
    // The instance dies at its first write of a work record: after the run was saved.
    let dying = true
    const store = new (class extends MemoryObjectStore {
      override put(...args: Parameters<MemoryObjectStore['put']>) {
        if (dying && args[0].includes('.turnline/work/pending/')) {
          return Promise.reject(new SimulatedCrash('the instance died'))
        }
        return super.put(...args)
      }
    })()
    const { service, model, clock } = engine(store)
    await service.createLoop('t1', loopBody('orphan', 2))
    await expect(service.runLoop('t1', 'orphan', { trigger: 'api' })).rejects.toThrow(
      SimulatedCrash,
    )
    dying = false
    expect(await service.getLoop('t1', 'orphan')).toMatchObject({ run: { state: 'running' } })
    expect((await service.listWork()).items).toEqual([])
    // Within a lease of its start the run may still be recording its step: left alone.
    expect((await service.fireSchedules()).started).toEqual([])
    await clock.advance(30_000)
    const swept = await service.fireSchedules()
    expect(swept.started).toHaveLength(1)
    expect((await service.listWork()).items).toEqual(swept.started)
    // Found again by a later sweep, the same record: nothing new.
    expect((await service.fireSchedules()).started).toEqual([])
    model.enqueue({ text: 'step 0' }, { text: 'step 1' })
    expect(await drain(service, swept.started[0])).toBe(2)
    expect(model.requests).toHaveLength(2)
    expect(await service.getLoop('t1', 'orphan')).toMatchObject({
      step_index: 2,
      run: { state: 'stopped', stop_reason: 'budget' },
    })
    // The run stopped: a sweep drops its entry once it is past the grace, and revives nothing.
    expect((await service.fireSchedules()).started).toEqual([])
    expect((await store.list('.turnline/loop-runs/')).objects).toHaveLength(1)
    await clock.advance(ENTRY_GRACE_MS)
    expect((await service.fireSchedules()).started).toEqual([])
    expect((await store.list('.turnline/loop-runs/')).objects).toEqual([])
  })
})

describe('a loop schedule', () => {
  it('starts one run per due slot, skips a slot while the loop is paused, and refuses a bad cron', async () => {
    const { service, model, clock } = engine()
    await service.createLoop('t1', { ...loopBody('nightly', 1), schedule: { cron: '*/5 * * * *' } })
    expect(await service.fireSchedules()).toEqual({ started: [], skipped: 0 })
    await clock.advance(5 * 60_000)
    const fired = await service.fireSchedules()
    expect(fired.started).toHaveLength(1)
    expect(await service.fireSchedules()).toEqual({ started: [], skipped: 0 })
    model.enqueue({ text: 'nightly 0' })
    await drain(service, fired.started[0])
    expect(await service.getLoop('t1', 'nightly')).toMatchObject({
      step_index: 1,
      status: 'paused',
      schedule: { cron: '*/5 * * * *', last_slot: '2026-01-01T00:05:00.000Z' },
      run: { trigger: 'schedule', state: 'stopped', stop_reason: 'budget' },
    })
    await clock.advance(5 * 60_000)
    expect(await service.fireSchedules()).toEqual({ started: [], skipped: 1 })
    await expect(
      service.createLoop('t1', { task: 'x', schedule: { cron: '61 * * * *' } }),
    ).rejects.toMatchObject({ code: 'invalid_input' })
  })
})

describe('cron expressions (UTC)', () => {
  const at = (iso: string) => Date.parse(iso)
  const cron = (source: string) => {
    const parsed = parseCron(source)
    if ('error' in parsed) throw new Error(parsed.error)
    return parsed
  }

  it('matches minutes, ranges, steps, lists and either restricted day field', () => {
    expect(cronMatches(cron('0 3 * * *'), at('2026-03-04T03:00:00Z'))).toBe(true)
    expect(cronMatches(cron('0 3 * * *'), at('2026-03-04T03:01:00Z'))).toBe(false)
    expect(cronMatches(cron('10-20/5 * * * *'), at('2026-03-04T07:15:00Z'))).toBe(true)
    expect(cronMatches(cron('5/20 * * * *'), at('2026-03-04T07:45:00Z'))).toBe(true)
    expect(cronMatches(cron('0 0 * * 7'), at('2026-03-08T00:00:00Z'))).toBe(true) // a Sunday
    expect(cronMatches(cron('0 0 1 * 1'), at('2026-03-09T00:00:00Z'))).toBe(true) // a Monday
    expect(cronMatches(cron('0 0 1 * 1'), at('2026-03-10T00:00:00Z'))).toBe(false)
    expect(cronMatches(cron('0 0 1,15 2 *'), at('2026-02-15T00:00:00Z'))).toBe(true)
  })

  it('finds the newest due slot after the last one, and names what is wrong', () => {
    const hourly = cron('0 * * * *')
    expect(latestCronSlot(hourly, at('2026-03-04T01:00:00Z'), at('2026-03-04T03:30:00Z'))).toBe(
      at('2026-03-04T03:00:00Z'),
    )
    expect(
      latestCronSlot(hourly, at('2026-03-04T03:00:00Z'), at('2026-03-04T03:59:59Z')),
    ).toBeUndefined()
    expect(parseCron('* * * *')).toEqual({ error: expect.stringContaining('5 fields') })
    expect(parseCron('* 24 * * *')).toEqual({ error: expect.stringContaining('hour') })
    expect(parseCron('*/0 * * * *')).toEqual({ error: expect.stringContaining('step') })
  })
})
