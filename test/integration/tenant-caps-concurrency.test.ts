import { describe, expect, it } from 'vitest'
import type { AppInstance } from '../support/app-instance.ts'
import { gate } from '../support/gate.ts'
import { type JsonAnswer, jsonCalls } from '../support/json-calls.ts'
import { until } from '../support/until.ts'
import { webhookDelivery } from '../support/webhook-delivery.ts'
import { webhookDeployment } from '../support/webhook-deployment.ts'

/**
 * The per-tenant caps hold exactly under concurrency (S3 on moto, Upstash on the REST proxy, two
 * instances built from the environment): of requests sent at once for a tenant's last place,
 * spread over both instances, exactly one is taken; a scheduled loop completed or failed gives
 * its place back at once, not at a sweep (the sweep here runs once a day); and a webhook
 * redelivery of a run already recorded is answered as a duplicate while its tenant is at the
 * pending-work cap, never refused by it.
 */
const MAX_SCHEDULED = 3
const MAX_PENDING = 4
const AT_ONCE = 8

const BETA_KEY = 'beta-caps-key-0123456789'
const deployment = webhookDeployment('capsrace', {
  TURNLINE_API_KEYS: `api-key-capsrace-0123456789=acme,${BETA_KEY}=beta`,
  TURNLINE_MAX_SCHEDULED_LOOPS: String(MAX_SCHEDULED),
  TURNLINE_MAX_PENDING_WORK: String(MAX_PENDING),
  TURNLINE_WORK_CONCURRENCY: '2',
  TURNLINE_WORK_SWEEP_MS: '86400000',
  TURNLINE_LOG: 'off',
  // No embedded runner (it would need the command sandbox): nothing here runs a command.
  TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
  TURNLINE_RUNNER_SECRET: 'capsrace-runner-secret-0123',
})
const { apps } = deployment
const model = () => deployment.mock
const calls = (on: AppInstance) =>
  jsonCalls(() => on.url, { authorization: `Bearer ${deployment.apiKey}` })
const async = { prefer: 'respond-async' }

const scheduled = (loopId: string) => ({
  loop_id: loopId,
  task: 'Tidy one file.',
  schedule: { cron: '0 3 * * *' },
  budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 1 },
})

function statuses(answers: JsonAnswer[]): number[] {
  return answers.map((answer) => answer.status).sort()
}

/** Two instances on one deployment, each with its worker (background routes need one). */
async function twoInstances() {
  const a = await apps.start(undefined, { background: true })
  const b = await apps.start(undefined, { background: true })
  return { a: calls(a), b: calls(b), instances: [a, b] as const }
}

describe('the per-tenant caps under concurrency', () => {
  it('creates exactly one of the scheduled loops sent at once for the last place', async () => {
    const { a, b } = await twoInstances()
    for (let n = 0; n < MAX_SCHEDULED - 1; n++) {
      expect((await a.call('POST', '/v1/loops', scheduled(`nightly-${n}`))).status).toBe(201)
    }
    const raced = await Promise.all(
      Array.from({ length: AT_ONCE }, (_, n) =>
        (n % 2 ? b : a).call('POST', '/v1/loops', scheduled(`race-${n}`)),
      ),
    )
    expect(statuses(raced)).toEqual([201, ...Array(AT_ONCE - 1).fill(409)])
    for (const refused of raced.filter((answer) => answer.status === 409)) {
      expect(refused.json().error).toMatchObject({ details: { reason: 'scheduled_loops' } })
    }
    expect((await b.call('POST', '/v1/loops', scheduled('one-more'))).status).toBe(409)
  })

  it('frees the place of a scheduled loop when it is completed or failed, not at the next sweep', async () => {
    const [a, b] = (await twoInstances()).instances.map((on) =>
      jsonCalls(() => on.url, { authorization: `Bearer ${BETA_KEY}` }),
    ) as [ReturnType<typeof calls>, ReturnType<typeof calls>]
    for (let n = 0; n < MAX_SCHEDULED; n++) {
      expect((await a.call('POST', '/v1/loops', scheduled(`nightly-${n}`))).status).toBe(201)
    }
    expect((await b.call('POST', '/v1/loops', scheduled('one-more'))).status).toBe(409)
    // Completed, then failed: each frees its place now; the sweep is a day away.
    for (const [loop, control] of [
      ['nightly-0', 'complete'],
      ['nightly-1', 'fail'],
    ] as const) {
      const ended = await a.call('POST', `/v1/loops/${loop}/step`, { control })
      expect(ended.status, ended.text).toBe(200)
      const next = await b.call('POST', '/v1/loops', scheduled(`after-${control}`))
      expect(next.status, next.text).toBe(201)
      expect((await a.call('POST', '/v1/loops', scheduled(`past-${control}`))).status).toBe(409)
    }
  })

  it('records exactly one of the background turns sent at once for the last pending place', {
    timeout: 120_000,
  }, async () => {
    const held = gate()
    model().respond(() => ({ text: 'ran', hold: held.promise }))
    const { a, b } = await twoInstances()
    const session = async () => (await a.call('POST', '/v1/sessions', {})).json().session_id
    const accepted: string[] = []
    const keyed = { ...async, 'idempotency-key': 'fill-0' }
    const firstSession = await session()
    for (let n = 0; n < MAX_PENDING - 1; n++) {
      const id = n === 0 ? firstSession : await session()
      const headers = n === 0 ? keyed : async
      const queued = await a.call('POST', `/v1/sessions/${id}/turns`, { input: 'x' }, headers)
      expect(queued.status, queued.text).toBe(202)
      accepted.push(queued.headers.get('location') ?? '')
    }
    const sessions = await Promise.all(Array.from({ length: AT_ONCE }, session))
    const raced = await Promise.all(
      sessions.map((id, n) =>
        (n % 2 ? b : a).call('POST', `/v1/sessions/${id}/turns`, { input: 'race' }, async),
      ),
    )
    expect(statuses(raced)).toEqual([202, ...Array(AT_ONCE - 1).fill(429)])
    for (const refused of raced.filter((answer) => answer.status === 429)) {
      expect(refused.json().error).toMatchObject({ details: { reason: 'pending_work' } })
    }
    accepted.push(raced.find((answer) => answer.status === 202)?.headers.get('location') ?? '')
    // A retry of a recorded turn (its Idempotency-Key) is its duplicate, never refused by the cap.
    const retried = await b.call(
      'POST',
      `/v1/sessions/${firstSession}/turns`,
      { input: 'x' },
      keyed,
    )
    expect(retried.status, retried.text).toBe(202)
    expect(retried.json()).toMatchObject({ duplicate: true })
    held.open()
    for (const location of accepted) await a.workState(location, 'done')
    expect(model().requests).toHaveLength(MAX_PENDING)
  })

  it('answers a redelivery of a recorded webhook run as a duplicate while its tenant is at the pending cap', {
    timeout: 120_000,
  }, async () => {
    const held = gate()
    model().respond(() => ({ text: 'handled', hold: held.promise }))
    const { a, b, instances } = await twoInstances()
    const delivery = await webhookDelivery(deployment.secret, '{"event":"capped"}')
    const first = await delivery.send(instances[0])
    expect(first.status).toBe(202)
    const locations = [first.headers.get('location') ?? '']
    for (let n = 0; n < MAX_PENDING - 1; n++) {
      const id = (await a.call('POST', '/v1/sessions', {})).json().session_id
      const queued = await a.call('POST', `/v1/sessions/${id}/turns`, { input: 'fill' }, async)
      expect(queued.status, queued.text).toBe(202)
      locations.push(queued.headers.get('location') ?? '')
    }
    // A new delivery is refused at the cap; the first one again, the same bytes or signed anew,
    // on either instance, is its duplicate.
    const fresh = await webhookDelivery(deployment.secret, '{"event":"new"}')
    expect((await fresh.send(instances[1])).status).toBe(429)
    const now = Math.floor(Date.now() / 1000)
    const [onA, onB] = instances
    for (const again of [await delivery.send(onB), await delivery.resign(now).send(onA)]) {
      expect(again.status, await again.clone().text()).toBe(202)
      expect(await again.json()).toMatchObject({ session_id: delivery.sessionId, duplicate: true })
    }
    held.open()
    for (const location of locations) await b.workState(location, 'done')
    expect(model().requests).toHaveLength(MAX_PENDING)
  })

  it('creates exactly one of the autorun loops sent at once for the last pending place, and nothing of the refused', {
    timeout: 120_000,
  }, async () => {
    const held = gate()
    model().respond(() => ({ text: 'ran', hold: held.promise }))
    const { a, b } = await twoInstances()
    const filled = await fill(a, MAX_PENDING - 1)
    const raced = await Promise.all(
      Array.from({ length: AT_ONCE }, (_, n) =>
        (n % 2 ? b : a).call('POST', '/v1/loops', { ...oneStep(`auto-${n}`), autorun: true }),
      ),
    )
    expect(statuses(raced)).toEqual([201, ...Array(AT_ONCE - 1).fill(429)])
    // A refused creation left no loop (it was created, its run refused after, before).
    for (const [n, answer] of raced.entries()) {
      const loop = await b.call('GET', `/v1/loops/auto-${n}`)
      expect(loop.status, loop.text).toBe(answer.status === 201 ? 200 : 404)
    }
    held.open()
    for (const location of filled) await a.workState(location, 'done')
    const winner = raced.findIndex((answer) => answer.status === 201)
    await runStopped(a, `auto-${winner}`)
  })

  it('answers a keyed retry of an exec or of a loop run start at the pending cap as its duplicate, and of an exec that ran', {
    timeout: 120_000,
  }, async () => {
    // Everything is held at the model until `first` opens, the refills until `second` does.
    const [first, second] = [gate(), gate()]
    model().respond((request) => ({
      text: 'ran',
      hold: (JSON.stringify(request.body).includes('refill') ? second : first).promise,
    }))
    const { a, b } = await twoInstances()
    const keyedExec = { ...async, 'idempotency-key': 'exec-at-cap' }
    const exec = await a.call('POST', '/v1/exec', { prompt: 'build-at-cap' }, keyedExec)
    expect(exec.status, exec.text).toBe(202)
    expect((await a.call('POST', '/v1/loops', oneStep('keyed-run'))).status).toBe(201)
    const runKey = { 'idempotency-key': 'run-at-cap' }
    const run = await a.call('POST', '/v1/loops/keyed-run/run', {}, runKey)
    expect(run.status, run.text).toBe(202)
    const filled = await fill(a, MAX_PENDING - 2)
    expect((await b.call('POST', '/v1/exec', { prompt: 'new' }, async)).status).toBe(429)
    const execAgain = async (on: ReturnType<typeof calls>) => {
      const again = await on.call('POST', '/v1/exec', { prompt: 'build-at-cap' }, keyedExec)
      expect(again.status, again.text).toBe(202)
      expect(again.json()).toMatchObject({ work_id: exec.json().work_id, duplicate: true })
    }
    await execAgain(b)
    const runAgain = await b.call('POST', '/v1/loops/keyed-run/run', {}, runKey)
    expect(runAgain.status, runAgain.text).toBe(202)
    expect(runAgain.json()).toMatchObject({ run_id: run.json().run_id, duplicate: true })

    // All ran (the exec's record left the queue); at the cap again, its retry is its duplicate.
    first.open()
    for (const location of [exec.headers.get('location') ?? '', ...filled]) {
      await a.workState(location, 'done')
    }
    await runStopped(a, 'keyed-run')
    const refilled = await fill(a, MAX_PENDING, 'refill')
    await execAgain(a)
    expect((await b.call('POST', '/v1/exec', { prompt: 'new' }, async)).status).toBe(429)
    second.open()
    for (const location of refilled) await b.workState(location, 'done')
    const built = model().requests.filter((r) => JSON.stringify(r.body).includes('build-at-cap'))
    expect(built).toHaveLength(1)
  })
})

const oneStep = (loopId: string) => ({
  loop_id: loopId,
  task: 'Tidy one file.',
  budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 1 },
})

/** Records `count` background turns of acme, each on a new session; their status locations. */
async function fill(on: ReturnType<typeof calls>, count: number, input = 'fill') {
  const locations: string[] = []
  for (let n = 0; n < count; n++) {
    const id = (await on.call('POST', '/v1/sessions', {})).json().session_id
    const queued = await on.call('POST', `/v1/sessions/${id}/turns`, { input }, async)
    expect(queued.status, queued.text).toBe(202)
    locations.push(queued.headers.get('location') ?? '')
  }
  return locations
}

/** Waits for a loop's run to stop (its one step ran), so nothing of it runs into the next test. */
async function runStopped(on: ReturnType<typeof calls>, loopId: string) {
  await until(`the run of ${loopId} stopped`, async () => {
    const loop = (await on.call('GET', `/v1/loops/${loopId}`)).json()
    return (loop.run as { state?: string } | undefined)?.state === 'stopped' || undefined
  })
}
