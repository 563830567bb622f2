import { describe, expect, it } from 'vitest'
import { useEntryWithMock } from '../support/entry-with-mock.ts'
import { jsonCalls } from '../support/json-calls.ts'

/**
 * Background runs are charged and refused like every other model call: on `npm start` (its own
 * background worker, the fs store, API keys) a tenant over its daily token quota gets its
 * background turn and background exec accepted (202, recorded), and the worker then refuses
 * them before any model call. They wait for the quota (background-quota-wait.test.ts) up to the
 * work's maximum age — 1 s here — and then each ends `failed` with `quota_exceeded`, saying it
 * expired; nothing is left pending, and the session holds no new turn.
 */
const KEY = 'bg-admission-key-0123456789'
const QUOTA = 150
const entry = useEntryWithMock('bg-admission', {
  TURNLINE_API_KEYS: `${KEY}=acme`,
  TURNLINE_LIMIT_TOKENS_PER_DAY: String(QUOTA),
  TURNLINE_WORK_SWEEP_MS: '250',
  TURNLINE_WORK_QUOTA_RETRY_MS: '100',
  TURNLINE_WORK_MAX_AGE_MS: '1000',
  // No embedded runner (it would need the command sandbox): nothing here runs a command.
  TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
  TURNLINE_RUNNER_SECRET: 'bg-admission-runner-secret',
})

const { call, workState } = jsonCalls(() => entry.url, { authorization: `Bearer ${KEY}` })

describe('background runs over the daily token quota', () => {
  it('are accepted, refused before any model call, and fail once they expire', async () => {
    const id = (await call('POST', '/v1/sessions', {})).json().session_id as string
    entry.mock.enqueue({
      text: 'the quota is spent',
      usage: { input_tokens: 100, output_tokens: 50 },
    })
    expect((await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })).status).toBe(200)
    expect((await call('GET', '/v1/usage')).json().tokens).toMatchObject({ used: QUOTA })
    // From here any model request fails the test (the mock has nothing queued).
    const async = { prefer: 'respond-async' }
    const turn = await call('POST', `/v1/sessions/${id}/turns`, { input: 'more' }, async)
    const exec = await call('POST', '/v1/exec', { prompt: 'list todos' }, async)
    for (const accepted of [turn, exec]) {
      expect(accepted.status, accepted.text).toBe(202)
      const work = await workState(accepted.headers.get('location') ?? '', 'failed', 'done')
      expect(work).toMatchObject({ state: 'failed', error: { code: 'quota_exceeded' } })
      const error = work.error as { message: string }
      expect(error.message).toMatch(/^expired: the work waited for its tenant's daily quota/)
      expect(error.message).toMatch(/the last refusal: the daily tokens quota .* is used up/)
    }
    expect(entry.mock.requests).toHaveLength(1)
    const view = (await call('GET', `/v1/sessions/${id}`)).json()
    expect(view).toMatchObject({ turn_count: 1 })
    expect((await call('GET', '/v1/usage')).json().tokens).toMatchObject({ used: QUOTA })
  })
})
