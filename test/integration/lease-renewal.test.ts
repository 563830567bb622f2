import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { AppInstance } from '../support/app-instance.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'

/**
 * The lease is renewed on a timer while a turn holds it, also while the model has not sent its
 * first byte (no stream events at all): a second turn sent after the lease's first lifetime is
 * refused 409 session_busy, and the first turn completes. Scaled down from the 60 s default:
 * a 3 s lease, a model that answers after 7 s, the second turn at 4.5 s.
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
    // Headers and first byte only after 7 s (more than twice the lease). A second request would
    // find the script exhausted, which fails the test (the mock's check after each test).
    mock.enqueue({ text: 'slow but sure', delayMs: 7000 })

    const first = post(`/v1/sessions/${session_id}/turns`, { input: 'think hard' })
    await sleep(4500)
    const second = await post(`/v1/sessions/${session_id}/turns`, { input: 'me too' })
    expect(second.status).toBe(409)
    // The first turn renews its lease, so it is running: retry after a renewal period (1 s of
    // the 3 s lease), not when the lease would lapse.
    expect(await second.json()).toMatchObject({
      error: { code: 'session_busy', details: { turn: 'running', retry_after_seconds: 1 } },
    })
    expect(second.headers.get('retry-after')).toBe('1')

    const answer = await first
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({ status: 'completed' })
    expect(mock.requests).toHaveLength(1)
  })
})
