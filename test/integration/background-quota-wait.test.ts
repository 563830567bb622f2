import { join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { useEntryWithMock } from '../support/entry-with-mock.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { keysCli } from '../support/keys-cli.ts'
import { signMessage } from '../support/signed-callback.ts'

/**
 * Background work refused for the tenant's daily quota waits for the quota instead of failing
 * (issue: it used to fail after 8 refusals, some 2 minutes, losing a webhook run answered 202).
 * On `npm start` (its own worker, the fs store, a key from the key registry) a turn and a
 * webhook run accepted over the quota stay pending — `waiting`, with the reason and the next
 * try — well past 8 refusals; once the operator raises the tenant's limit (`npm run keys --
 * limits`, read by the server within a second) each runs, once.
 */
const SECRET = `whsec_${Buffer.from('background-quota-wait-secret-0123').toString('base64')}`
const QUOTA = 150
const entry = useEntryWithMock('bg-quota-wait', {
  TURNLINE_KEY_REGISTRY: '1',
  TURNLINE_KEY_RELOAD_SECONDS: '1',
  TURNLINE_LIMIT_TOKENS_PER_DAY: String(QUOTA),
  TURNLINE_WORK_SWEEP_MS: '250',
  // Refused work is tried again every 100 ms: the old limit of 8 refusals passes quickly.
  TURNLINE_WORK_QUOTA_RETRY_MS: '100',
  TURNLINE_WEBHOOKS: JSON.stringify({
    triage: { secret: SECRET, tenant: 'acme', prompt: 'New issue event: {{body}}' },
  }),
  // No embedded runner (it would need the command sandbox): nothing here runs a command.
  TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
  TURNLINE_RUNNER_SECRET: 'bg-quota-wait-runner-secret',
})

/** The key the registry makes for the tenant (filled in before the tests). */
const auth: Record<string, string> = {}
const keys = () => keysCli(new FsObjectStore({ root: join(entry.dir, 'data') }), '')

beforeAll(async () => {
  const cli = keys()
  expect(await cli.run('add', 'acme'), cli.err.join('\n')).toBe(0)
  expect(cli.out[0]).toMatch(/\S/)
  auth.authorization = `Bearer ${cli.out[0]}`
})

const { call, workState, workWhere } = jsonCalls(() => entry.url, auth)

describe('background work over the daily quota', { timeout: 180_000 }, () => {
  it('waits for the quota past the old 8 refusals, then runs once it allows, once', async () => {
    const usage = { input_tokens: 100, output_tokens: 50 }
    const id = (await call('POST', '/v1/sessions', {})).json().session_id as string
    entry.mock.enqueue({ text: 'the quota is spent', usage })
    expect((await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })).status).toBe(200)
    // From here a model request fails the test until the limit is raised (nothing queued).
    const turn = await call(
      'POST',
      `/v1/sessions/${id}/turns`,
      { input: 'more' },
      {
        prefer: 'respond-async',
        'idempotency-key': 'quota-wait-turn',
      },
    )
    expect(turn.status, turn.text).toBe(202)
    const body = JSON.stringify({ action: 'opened', title: 'Crash' })
    const hook = await fetch(`${entry.url}/v1/webhooks/triage`, {
      method: 'POST',
      ...signMessage(SECRET, body, 'msg_quota_wait_1'),
    })
    const hookText = await hook.text()
    expect(hook.status, hookText).toBe(202)
    const hookSession = (JSON.parse(hookText) as { session_id: string }).session_id
    const works = [turn.headers.get('location') ?? '', hook.headers.get('location') ?? '']
    const created = await call('POST', '/v1/responses', { input: 'later', background: true })
    expect(created.status, created.text).toBe(200)
    const responseId = created.json().id as string

    for (const at of works) {
      const waiting = await workWhere(at, (w) => Number(w.waiting && refusals(w)) > 8)
      expect(waiting).toMatchObject({
        state: 'waiting',
        waiting: { reason: 'quota_exceeded', message: expect.stringMatching(/used up/) },
      })
      expect(waiting.attempts).toBeUndefined()
      expect(Date.parse(String(field(waiting, 'retry_at')))).not.toBeNaN()
    }
    expect(entry.mock.requests).toHaveLength(1)
    // A background response whose work waits for the quota has not started: `queued`.
    const queued = await call('GET', `/v1/responses/${responseId}`)
    expect(queued.json()).toMatchObject({ id: responseId, status: 'queued' })

    for (let i = 0; i < 3; i++) entry.mock.enqueue({ text: 'ran once the quota allowed', usage })
    const cli = keys()
    expect(await cli.run('limits', 'acme', '--tokens-per-day', '100000')).toBe(0)
    // The turn completes; the webhook run's turn ends its session (`terminal`).
    const outcomes = ['completed', 'terminal']
    for (const [i, at] of works.entries()) {
      const done = await workState(at, 'done', 'failed')
      expect(done).toMatchObject({ state: 'done', turn: { status: outcomes[i] } })
    }
    await vi.waitUntil(
      async () => (await call('GET', `/v1/responses/${responseId}`)).json().status === 'completed',
      { timeout: 60_000, interval: 100 },
    )
    expect(entry.mock.requests).toHaveLength(4)
    entry.mock.assertDone()
    expect((await call('GET', `/v1/sessions/${id}`)).json()).toMatchObject({ turn_count: 2 })
    const hookView = (await call('GET', `/v1/sessions/${hookSession}`)).json()
    expect(hookView).toMatchObject({ turn_count: 1 })
  })
})

function field(work: Record<string, unknown>, name: string): unknown {
  return (work.waiting as Record<string, unknown> | undefined)?.[name]
}

function refusals(work: Record<string, unknown>): number {
  return Number(field(work, 'refusals') ?? 0)
}
