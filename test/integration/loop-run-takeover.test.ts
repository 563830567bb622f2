import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { gate } from '../support/gate.ts'
import { jsonCaller } from '../support/json-call.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * Loop runs on two `npm start` processes over one S3 bucket (moto) and one Upstash (the REST
 * proxy on redis-server): `POST /v1/loops/{id}/run` on A steps the loop in the background; A is
 * killed (SIGKILL) while the model answers step 1; B, started then and never told, finds the
 * step's record in its sweep, continues step 1 once A's lease lapsed, runs step 2 and stops the run at the loop's
 * budget. Every step's turn started once; nothing is left in the queue. A loop created with
 * `autorun` runs the same way, and a second `run` answers the running one.
 */
const API_KEY = 'loop-run-takeover-key-0123456789'
const AUTH = { authorization: `Bearer ${API_KEY}` }
const LEASE_MS = 3000

let backends: TestBackends
let mock: MockOpenAI
let A: NodeEntry
let B: NodeEntry
let urlA = ''
let urlB = ''
let runnerRoot = ''
let env: Record<string, string> = {}

beforeAll(async () => {
  backends = await startTestBackends('looprun')
  mock = backends.mock
  runnerRoot = await mkdtemp(join(tmpdir(), 'turnline-looprun-runner-'))
  await chmod(runnerRoot, 0o711)
  env = backends.env({
    PORT: '0',
    TURNLINE_API_KEYS: `${API_KEY}=acme`,
    TURNLINE_LEASE_MS: String(LEASE_MS),
    TURNLINE_WORK_SWEEP_MS: '300',
    TURNLINE_RUNNER_ROOT: runnerRoot,
  })
  // B starts once A is in the middle of the run: no sweep of B's can take a step before A dies.
  A = startNodeEntry(env)
  urlA = await A.listening()
}, 120_000)

afterAll(async () => {
  await Promise.all([A?.stop(), B?.stop()])
  await backends?.close()
  if (runnerRoot) await rm(runnerRoot, { recursive: true, force: true })
})

const call = jsonCaller(AUTH)

/** Reads the loop until its run stopped (polls: the run ends in another process). */
async function stoppedRun(url: string, loopId: string) {
  const deadline = Date.now() + 90_000
  for (;;) {
    const loop = (await call(url, 'GET', `/v1/loops/${loopId}`)).json()
    if (loop.run?.state === 'stopped') return loop
    if (Date.now() > deadline) throw new Error(`the run never stopped: ${JSON.stringify(loop.run)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function turnStarts(url: string, sessionId: string): Promise<number> {
  const events = await call(url, 'GET', `/v1/sessions/${sessionId}/events?after=-1`)
  expect(events.status, events.text).toBe(200)
  return events.text.split('\n').filter((line) => line.includes('"turn.started"')).length
}

const budget = { max_steps: 3, max_tokens: 1_000_000, max_cost_usd: 10 }

describe('a loop run whose instance is killed mid-step', () => {
  it('is taken over by another instance and runs to the loop’s budget, each step once', async () => {
    const created = await call(urlA, 'POST', '/v1/loops', {
      loop_id: 'nightly',
      task: 'Tidy.',
      budget,
    })
    expect(created.status, created.text).toBe(201)
    const never = gate() // A's model call of step 1 is answered by nobody: A dies in it
    mock.enqueue(
      { text: 'step 0 done' },
      { text: 'never sent', hold: never.promise },
      { text: 'step 1 done on B' },
      { text: 'step 2 done on B' },
    )
    const started = await call(
      urlA,
      'POST',
      '/v1/loops/nightly/run',
      {},
      { 'idempotency-key': 'r1' },
    )
    expect(started.status, started.text).toBe(202)
    expect(started.json()).toMatchObject({
      loop_id: 'nightly',
      duplicate: false,
      status: 'running',
    })
    const again = await call(urlA, 'POST', '/v1/loops/nightly/run', {})
    expect(again.json()).toMatchObject({ duplicate: true, run_id: started.json().run_id })

    await until('A in the model call of step 1', () =>
      mock.requests.length >= 2 ? true : undefined,
    )
    const pid = A.child.pid
    if (pid === undefined) throw new Error('A has no pid')
    process.kill(-pid, 'SIGKILL')
    await A.exited
    never.open()
    B = startNodeEntry(env)
    urlB = await B.listening()

    const loop = await stoppedRun(urlB, 'nightly')
    expect(loop).toMatchObject({
      step_index: 3,
      status: 'paused',
      budget_status: 'step_limit_reached',
      run: { run_id: started.json().run_id, stop_reason: 'budget', first_step: 0 },
    })
    expect(loop.steps.map((s: { subtype: string }) => s.subtype)).toEqual([
      'success',
      'success',
      'success',
    ])
    expect(mock.requests).toHaveLength(4)
    for (const step of [0, 1, 2]) expect(await turnStarts(urlB, `nightly-step-${step}`)).toBe(1)
    const step1 = await call(urlB, 'GET', '/v1/sessions/nightly-step-1/events?after=-1')
    expect(step1.text).toContain('step 1 done on B')
    expect(step1.text).not.toContain('never sent')
    const pending = await listAll(backends.bucket.store(), '.turnline/work/pending/')
    expect(pending.objects).toEqual([])
  })

  it('runs a loop created with autorun to its end on its own', async () => {
    mock.enqueue({ text: 'auto 0' }, { text: 'auto 1' })
    const created = await call(urlB, 'POST', '/v1/loops', {
      loop_id: 'auto',
      task: 'Tidy.',
      autorun: true,
      budget: { ...budget, max_steps: 2 },
    })
    expect(created.status, created.text).toBe(201)
    expect(created.json()).toMatchObject({ run: { trigger: 'autorun', state: 'running' } })
    const loop = await stoppedRun(urlB, 'auto')
    expect(loop).toMatchObject({ step_index: 2, run: { stop_reason: 'budget' } })
    const completed = await call(urlB, 'POST', '/v1/loops/auto/step', { control: 'complete' })
    expect(completed.status).toBe(200)
    const refused = await call(urlB, 'POST', '/v1/loops/auto/run', {})
    expect(refused.status).toBe(409)
  })
})
