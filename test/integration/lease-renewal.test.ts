import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import type { AppInstance } from '../support/app-instance.ts'
import { gate } from '../support/gate.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * The lease is renewed on a timer while a turn holds it, also while the model has not sent its
 * first byte (no stream events at all): a second turn sent after the lease's first lifetime is
 * refused 409 session_busy, and the first turn completes. Scaled down from the 60 s default:
 * a 3 s lease, the second turn 4.5 s after the model call began (real time: the subject is the
 * lease's TTL in redis-server), and a model that answers only once the test has seen that 409
 * (a held reply, so no machine is slow enough for the first turn to end before it).
 */
const LEASE_MS = 3000
let deployment: TestDeployment
let mock: MockOpenAI
let app: AppInstance

beforeAll(async () => {
  deployment = await startTestDeployment('lease', { TURNLINE_LEASE_MS: String(LEASE_MS) })
  ;({ mock, app } = deployment)
})
afterAll(() => deployment?.close())
beforeEach(() => mock.reset())

const post = (path: string, body: unknown) =>
  fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('lease renewal', () => {
  it('holds the lease while the model is slow to send its first byte', async () => {
    const created = await post('/v1/sessions', {})
    const { session_id } = (await created.json()) as { session_id: string }
    // Headers and first byte only when the test says so (after more than the lease's lifetime).
    // A second request would find the script exhausted, which fails the test (the mock's check
    // after each test).
    const reply = gate()
    onTestFinished(reply.open)
    mock.enqueue({ text: 'slow but sure', hold: reply.promise })

    const first = post(`/v1/sessions/${session_id}/turns`, { input: 'think hard' })
    await until('the model call of the first turn', () =>
      mock.requests.length > 0 ? true : undefined,
    )
    await sleep(LEASE_MS * 1.5)
    const second = await post(`/v1/sessions/${session_id}/turns`, { input: 'me too' })
    expect(second.status).toBe(409)
    // The first turn renews its lease, so it is running: retry after a renewal period (1 s of
    // the 3 s lease), not when the lease would lapse.
    expect(await second.json()).toMatchObject({
      error: { code: 'session_busy', details: { turn: 'running', retry_after_seconds: 1 } },
    })
    expect(second.headers.get('retry-after')).toBe('1')

    reply.open()
    const answer = await first
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({ status: 'completed' })
    expect(mock.requests).toHaveLength(1)
  })
})
