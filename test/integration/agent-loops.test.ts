import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { createApp } from '../../functions/app.ts'
import type { LoopStepResponse, LoopView } from '../../src/contract/loop-state.ts'
import { runLoopStep } from '../../src/core/loops/loop-step.ts'
import { LoopStore } from '../../src/core/loops/loop-store.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { SessionLocator } from '../../src/store/session-locator.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { startEngine } from '../support/engine-harness.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * Loop run state on S3 (moto): a loop's step index, cumulative tokens and cost survive in
 * `.vtcode/state/loop-<id>.json`; a cold process (a new service with empty caches) resumes it by
 * id with the same numbers, finishes a step another process claimed and ran without running it
 * again, and the step budget pauses it with step_limit_reached.
 */
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let engine: Awaited<ReturnType<typeof startEngine>>
const coordinator = new MemoryCoordinator()

beforeAll(async () => {
  bucket = await createTestBucket(requireServices().s3, 'loops')
  engine = await startEngine({ store: bucket.store('l'), coordinator })
})
afterAll(async () => {
  await engine?.close()
  await bucket?.destroy()
})

/** Another process: a new service and store (no caches) over the same bucket and Redis. */
function coldService() {
  const sessions = new SessionStore({ store: bucket.store('l') })
  const deps = { ...engine.deps, sessions }
  return { service: new SessionService(deps), deps }
}

const PRICE = { input: 0.001, output: 0.002 }
const answer = (text: string) => ({ text, usage: { input_tokens: 100, output_tokens: 50 } })

describe('loop run state', () => {
  it('resumes in a cold process with the same step index and cost, and stops at its budget', async () => {
    const { service, mock } = engine
    const created = await service.createLoop('t1', {
      loop_id: 'nightly',
      task: 'Fix one failing test, then record what you did.',
      session: {
        workspace: 'loop-ws',
        model: { name: 'loop-model', price: PRICE },
        harness: { orientation_token_budget: 2000 },
      },
      budget: { max_steps: 4, max_tokens: 1_000_000, max_cost_usd: 5 },
    })
    expect(created).toMatchObject({
      loop_id: 'nightly',
      step_index: 0,
      status: 'running',
      last_artifact_path: null,
      budget_report: { status: 'ok', steps: { used: 0, max: 4 } },
    })
    await expect(service.createLoop('t1', { loop_id: 'nightly', task: 'x' })).rejects.toMatchObject(
      {
        code: 'conflict',
      },
    )

    mock.enqueue(
      {
        toolCalls: [{ id: 'n1', name: 'append_note', arguments: '{"text":"step 0 fixed test_a"}' }],
        usage: { input_tokens: 100, output_tokens: 50 },
      },
      answer('fixed test_a'),
    )
    const first = await service.stepLoop('t1', 'nightly', {})
    expect(first.step).toMatchObject({ index: 0, session_id: 'nightly-step-0', subtype: 'success' })
    // The second step orients from what the first one left: its note.
    mock.enqueue(answer('fixed test_b'))
    const second = await service.stepLoop('t1', 'nightly', { input: 'Start with test_b.' })
    const orientation = ((mock.requests.at(-1)?.body.messages ?? []) as { content: string }[])[0]
      ?.content
    expect(orientation).toContain('step 0 fixed test_a')
    expect(
      ((mock.requests.at(-1)?.body.messages ?? []) as { content: string }[]).at(-1)?.content,
    ).toBe('Fix one failing test, then record what you did.\n\nStart with test_b.')
    const cost = 3 * (100 * PRICE.input + 50 * PRICE.output)
    expect(second.loop).toMatchObject({
      step_index: 2,
      status: 'running',
      last_session_id: 'nightly-step-1',
      // S3 keeps no events.jsonl: the manifest lists the parts that hold the step's events.
      last_artifact_path: '.vtcode/sessions/nightly-step-1/manifest.json',
      cumulative: { input_tokens: 300, output_tokens: 150 },
    })
    expect(second.loop.cumulative.total_cost_usd).toBeCloseTo(cost, 10)

    // A cold process reads the same state from object storage.
    const cold = coldService()
    const read = await cold.service.getLoop('t1', 'nightly')
    expect(read.step_index).toBe(2)
    expect(read.cumulative).toEqual(second.loop.cumulative)
    expect(read.steps.map((s) => s.session_id)).toEqual(['nightly-step-0', 'nightly-step-1'])

    // Process A claims step 2 and runs its session, then dies before accounting for it…
    const store = new LoopStore(engine.deps.sessions)
    let loop = await store.load('t1', 'nightly')
    const claim = { index: 2, session_id: 'nightly-step-2', started_at: new Date().toISOString() }
    loop = await store.save(loop, { ...loop.state, current_step: claim })
    mock.enqueue(answer('fixed test_c'))
    const locator = new SessionLocator(engine.deps.sessions.objects, '')
    const ran = await runLoopStep({
      deps: engine.deps,
      locator,
      tenant: 't1',
      state: loop.state,
      claim,
    })
    expect(ran.kind).toBe('done')
    const requests = mock.requests.length
    // …and the cold process finishes it: accounted once, the model not called again.
    const resumed = await cold.service.stepLoop('t1', 'nightly', {})
    expect(mock.requests.length).toBe(requests)
    expect(resumed.step).toMatchObject({
      index: 2,
      session_id: 'nightly-step-2',
      result: 'fixed test_c',
    })
    expect(resumed.loop).toMatchObject({ step_index: 3, current_step: null })

    mock.enqueue(answer('fixed test_d'))
    const fourth = await cold.service.stepLoop('t1', 'nightly', {})
    expect(fourth.loop).toMatchObject({
      step_index: 4,
      status: 'paused',
      budget_status: 'step_limit_reached',
      budget_report: { status: 'step_limit_reached', steps: { used: 4, max: 4 } },
    })
    expect(fourth.loop.cumulative.total_cost_usd).toBeCloseTo(
      5 * (100 * PRICE.input + 50 * PRICE.output),
      10,
    )
    await expect(cold.service.stepLoop('t1', 'nightly', {})).rejects.toMatchObject({
      code: 'conflict',
    })

    // The ledger followed the loop's own signals: four completed steps.
    const ledger = await service.getArtifact('t1', 'loop-ws', 'progress')
    expect(ledger.value).toMatchObject({
      advances: 4,
      stalled_since: null,
      session_id: 'nightly-step-3',
    })
    mock.assertDone()
  })

  it('serves loops over HTTP with controls and budget changes', async () => {
    const app = createApp({ api: engine.service, auth: { keys: [] }, log: () => {} })
    const post = (path: string, body: unknown) =>
      app.request(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const created = await post('/v1/loops', {
      task: 'do',
      session: { model: { name: 'loop-model', price: PRICE } },
      budget: { max_cost_usd: 0.0001 },
    })
    expect(created.status).toBe(201)
    const { loop_id } = (await created.json()) as LoopView
    engine.mock.enqueue(answer('done'))
    const step = (await (await post(`/v1/loops/${loop_id}/step`, {})).json()) as LoopStepResponse
    expect(step.loop).toMatchObject({ status: 'paused', budget_status: 'cost_limit_reached' })
    const raised = await post(`/v1/loops/${loop_id}/step`, {
      control: 'resume',
      budget: { max_cost_usd: 10 },
    })
    expect(((await raised.json()) as LoopStepResponse).loop).toMatchObject({
      status: 'running',
      budget_status: 'ok',
    })
    const done = await post(`/v1/loops/${loop_id}/step`, { control: 'complete' })
    expect(((await done.json()) as LoopStepResponse).loop.status).toBe('completed')
    expect((await post(`/v1/loops/${loop_id}/step`, {})).status).toBe(409)
    expect((await app.request(`/v1/loops/${loop_id}`)).status).toBe(200)
    expect((await app.request('/v1/loops/no-such-loop')).status).toBe(404)
    expect((await app.request('/v1/loops/bad.id')).status).toBe(400)
    expect((await post('/v1/loops', { task: 'x', budget: { max_steps: 0 } })).status).toBe(400)
    engine.mock.assertDone()
  })
})
