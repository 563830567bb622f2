import { describe, expect, it, vi } from 'vitest'
import { useEntryWithMock } from '../support/entry-with-mock.ts'
import { gate } from '../support/gate.ts'
import { signMessage } from '../support/signed-callback.ts'
import { until } from '../support/until.ts'

/**
 * Work the background worker runs — a turn, an exec run, a loop step and a webhook run, each
 * answered 202 and run later by `npm start`'s own worker — is admitted like `POST …/turns`: it
 * holds one of the tenant's turn slots while it runs (so a request meanwhile is 429), a second
 * one waits for the slot instead of running beside it, and over the daily token quota none of
 * it reaches the model (the work waits for the quota and shows why). Every model call here uses 40,005 tokens, so that a
 * call in flight (its reservation, some 6,400 tokens) leaves the quota of 100,000 open.
 */
const SECRET = `whsec_${Buffer.from('background-admission-secret-0123').toString('base64')}`
const usage = { input_tokens: 40_000, output_tokens: 5 }
const entry = useEntryWithMock('bg-admission-paths', {
  TURNLINE_WORK_SWEEP_MS: '250',
  TURNLINE_LIMIT_CONCURRENT_TURNS: '1',
  TURNLINE_LIMIT_TOKENS_PER_DAY: '100000',
  TURNLINE_WEBHOOKS: JSON.stringify({
    triage: { secret: SECRET, tenant: 'local', prompt: 'New issue event: {{body}}' },
  }),
})

async function call(path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${entry.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return {
    status: response.status,
    location: response.headers.get('location') ?? '',
    text,
    json: () => JSON.parse(text) as Record<string, unknown>,
  }
}

const ASYNC = { prefer: 'respond-async' }
const newSession = async () => (await call('/v1/sessions', {})).json().session_id as string

/** Records background work; its status resource. */
async function queued(path: string, body: unknown, key: string): Promise<string> {
  const answer = await call(path, body, { ...ASYNC, 'idempotency-key': key })
  expect(answer.status, answer.text).toBe(202)
  return answer.location
}

async function deliver(id: string) {
  const signed = signMessage(SECRET, JSON.stringify({ action: 'opened', title: 'Crash' }), id)
  const response = await fetch(`${entry.url}/v1/webhooks/triage`, { method: 'POST', ...signed })
  return {
    status: response.status,
    location: response.headers.get('location') ?? '',
    text: await response.text(),
  }
}

/** The work's status once `done` holds for it (polled: the worker runs it when it can). */
async function workUntil(location: string, done: (work: Record<string, unknown>) => boolean) {
  let last = ''
  const seen = async () => {
    const answer = await call(location)
    last = answer.text
    return answer.status === 200 && done(answer.json()) ? answer.json() : undefined
  }
  return vi
    .waitUntil(seen, { timeout: 60_000, interval: 50 })
    .catch((error: unknown) => Promise.reject(new Error(`${location}: ${last}`, { cause: error })))
}

describe('work the background worker runs is admitted', { timeout: 180_000 }, () => {
  it('holds a turn slot while it runs; a second one waits for the slot', async () => {
    let inFlight = 0
    let most = 0
    const held = gate()
    entry.mock.respond(async (request) => {
      // The request below must be refused; were it not, it would answer at once (and fail).
      if (JSON.stringify(request.body).includes('not now')) return { text: 'ran', usage }
      inFlight += 1
      most = Math.max(most, inFlight)
      try {
        await held.promise
        return { text: 'done in the background', usage }
      } finally {
        inFlight -= 1
      }
    })
    const first = await queued(`/v1/sessions/${await newSession()}/turns`, { input: 'a' }, 'bg-a')
    await until('the background turn in its model call', () => (inFlight === 1 ? true : undefined))
    const second = await queued(`/v1/sessions/${await newSession()}/turns`, { input: 'b' }, 'bg-b')

    // The worker's turn holds the tenant's only slot: a request now is refused.
    const refused = await call(`/v1/sessions/${await newSession()}/turns`, { input: 'not now' })
    expect(refused.status, refused.text).toBe(429)
    expect(refused.json()).toMatchObject({
      error: { code: 'too_many_concurrent_turns', details: { limit: 1, active: 1 } },
    })
    expect((await call(second)).json()).toMatchObject({ state: 'queued' })

    held.open()
    for (const at of [first, second]) {
      const done = await workUntil(at, (w) => w.state === 'done')
      expect(done.turn).toMatchObject({ status: 'completed' })
    }
    expect(most).toBe(1)
    expect(entry.mock.requests).toHaveLength(2)
  })

  it('over the daily quota no background work reaches the model; it says why', async () => {
    entry.mock.reset()
    // 80,010 tokens so far; this turn takes the day's usage past the limit.
    entry.mock.enqueue({ text: 'the last one today', usage })
    const last = await call(`/v1/sessions/${await newSession()}/turns`, { input: 'last' })
    expect(last.status, last.text).toBe(200)
    entry.mock.reset()

    const created = await call('/v1/loops', { task: 'tidy the repo' })
    expect(created.status, created.text).toBe(201)
    const loopId = created.json().loop_id as string
    const hook = await deliver('msg_bg_admission_1')
    expect(hook.status, hook.text).toBe(202)
    const works = [
      await queued(`/v1/sessions/${await newSession()}/turns`, { input: 'more' }, 'bg-quota'),
      await queued('/v1/exec', { prompt: 'list todos' }, 'bg-exec'),
      await queued(`/v1/loops/${loopId}/step`, {}, 'bg-loop'),
      hook.location,
    ]
    for (const at of works) {
      const work = await workUntil(at, (w) => w.waiting !== undefined || w.error !== undefined)
      const wait = work.waiting as { reason: string; message: string }
      expect({ at, state: work.state, reason: wait?.reason }).toEqual({
        at,
        state: 'waiting',
        reason: 'quota_exceeded',
      })
      expect(wait.message).toMatch(
        /daily tokens quota of tenant local is used up \(120015 of 100000\)/,
      )
    }
    expect(entry.mock.requests).toHaveLength(0)
    entry.mock.assertDone()
  })
})
