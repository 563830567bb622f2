import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AppInstance, startAppInstance } from '../support/app-instance.ts'
import { gate } from '../support/gate.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * The per-tenant caps on what the sweeps walk, on a deployment built from its environment
 * (createDeps) over S3 (moto) and Upstash (the REST proxy on redis-server), with its background
 * worker: a tenant may schedule TURNLINE_MAX_SCHEDULED_LOOPS loops (the next is 409 naming the
 * limit) and hold TURNLINE_MAX_PENDING_WORK background records (the next background turn, exec or
 * loop run is 429 with Retry-After, naming it), another tenant is not counted with it, and a
 * place frees once a record has run.
 */
const ACME = 'acme-caps-key-0123456789'
const OTHER = 'other-caps-key-0123456789'
const MAX_SCHEDULED = 2
const MAX_PENDING = 3

let backends: TestBackends
let app: AppInstance

beforeAll(async () => {
  backends = await startTestBackends('bgcaps')
  const env = backends.env({
    TURNLINE_API_KEYS: `${ACME}=acme,${OTHER}=other`,
    TURNLINE_MAX_SCHEDULED_LOOPS: String(MAX_SCHEDULED),
    TURNLINE_MAX_PENDING_WORK: String(MAX_PENDING),
    // Two places: held at the model, a tenant's turns keep its records pending.
    TURNLINE_WORK_CONCURRENCY: '2',
    TURNLINE_WORK_SWEEP_MS: '200',
    TURNLINE_LOG: 'off',
    // No embedded runner (it would need the command sandbox): nothing here runs a command.
    TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
    TURNLINE_RUNNER_SECRET: 'bgcaps-runner-secret-0123',
  })
  app = await startAppInstance(env, undefined, { background: true })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await backends?.close()
})

const acme = jsonCalls(() => app.url, { authorization: `Bearer ${ACME}` })
const other = jsonCalls(() => app.url, { authorization: `Bearer ${OTHER}` })

const scheduled = (loopId: string) => ({
  loop_id: loopId,
  task: 'Tidy one file.',
  schedule: { cron: '0 3 * * *' },
  budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 1 },
})

describe('per-tenant caps on background work', () => {
  it('refuses a scheduled loop past the cap with 409 naming it, and counts each tenant alone', async () => {
    for (let n = 0; n < MAX_SCHEDULED; n++) {
      const created = await acme.call('POST', '/v1/loops', scheduled(`nightly-${n}`))
      expect(created.status, created.text).toBe(201)
    }
    const refused = await acme.call('POST', '/v1/loops', scheduled('one-too-many'))
    expect(refused.status, refused.text).toBe(409)
    expect(refused.json().error).toMatchObject({
      code: 'conflict',
      details: { reason: 'scheduled_loops', limit: 'TURNLINE_MAX_SCHEDULED_LOOPS', max: 2 },
    })
    expect(String((refused.json().error as { message: string }).message)).toContain(
      'TURNLINE_MAX_SCHEDULED_LOOPS',
    )
    // Nothing of it was kept, and a loop without a schedule is not counted.
    expect((await acme.call('GET', '/v1/loops/one-too-many')).status).toBe(404)
    const { schedule: _, ...unscheduled } = scheduled('by-hand')
    expect((await acme.call('POST', '/v1/loops', unscheduled)).status).toBe(201)
    expect((await other.call('POST', '/v1/loops', scheduled('nightly-0'))).status).toBe(201)
  })

  it('refuses background work past the pending cap with 429 naming it, and takes it again once some ran', {
    timeout: 120_000,
  }, async () => {
    const held = gate()
    // Every acme turn is held at the model (a lone tenant takes both places); the other's is not.
    backends.mock.respond((request) =>
      JSON.stringify(request.body).includes('other tenant turn')
        ? { text: 'other tenant' }
        : { text: 'acme, held', hold: held.promise },
    )
    const async = { prefer: 'respond-async' }
    const locations: string[] = []
    for (let n = 0; n < MAX_PENDING; n++) {
      const id = (await acme.call('POST', '/v1/sessions', {})).json().session_id as string
      const queued = await acme.call('POST', `/v1/sessions/${id}/turns`, { input: `t${n}` }, async)
      expect(queued.status, queued.text).toBe(202)
      locations.push(queued.headers.get('location') ?? '')
    }
    await until('the first turn at the model', () => backends.mock.requests.length || undefined)
    const id = (await acme.call('POST', '/v1/sessions', {})).json().session_id as string
    const { schedule: _, ...unscheduled } = scheduled('run-me')
    expect((await acme.call('POST', '/v1/loops', unscheduled)).status).toBe(201)
    const refusals = [
      await acme.call('POST', `/v1/sessions/${id}/turns`, { input: 'one too many' }, async),
      await acme.call('POST', '/v1/exec', { prompt: 'one too many' }, async),
      await acme.call('POST', '/v1/loops/run-me/run', {}),
    ]
    for (const refused of refusals) {
      expect(refused.status, refused.text).toBe(429)
      expect(refused.headers.get('retry-after')).toBe('10')
      expect(refused.json().error).toMatchObject({
        code: 'rate_limited',
        details: { reason: 'pending_work', limit: 'TURNLINE_MAX_PENDING_WORK', max: 3 },
      })
    }
    // Another tenant's work is counted apart: taken and run beside acme's held turn.
    const otherId = (await other.call('POST', '/v1/sessions', {})).json().session_id as string
    const theirs = await other.call(
      'POST',
      `/v1/sessions/${otherId}/turns`,
      { input: 'other tenant turn' },
      async,
    )
    expect(theirs.status, theirs.text).toBe(202)
    await other.workState(theirs.headers.get('location') ?? '', 'done')

    held.open()
    for (const location of locations) await acme.workState(location, 'done')
    const again = await acme.call('POST', `/v1/sessions/${id}/turns`, { input: 'now' }, async)
    expect(again.status, again.text).toBe(202)
    await acme.workState(again.headers.get('location') ?? '', 'done')
    backends.mock.respond(undefined)
  })
})
