import { beforeAll, describe, expect, it, vi } from 'vitest'
import { sha256Hex } from '../../src/shared/sha256-hex.ts'
import type { AppInstance } from '../support/app-instance.ts'
import { crashingFetch } from '../support/crashing-fetch.ts'
import { jsonCalls } from '../support/json-calls.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { signMessage } from '../support/signed-callback.ts'
import { webhookDeployment } from '../support/webhook-deployment.ts'

/**
 * A webhook delivery whose first attempt died between the replay guard's record of its signed
 * message and its run (S3 + Upstash, the process killed at one write by its own fetch), resent
 * with the same bytes — the same webhook-id, timestamp and signature — to another instance:
 * it runs, once, on the request path and on the background path; a replay of a run that did
 * happen never runs again, also after its session was deleted; two identical deliveries at
 * once run once.
 */

/** The lease a dead instance's turn keeps: short, so a resend waits seconds, not a minute. */
const LEASE_MS = 3000
const deployment = webhookDeployment('whresend', { TURNLINE_LEASE_MS: String(LEASE_MS) })
const { secret: SECRET, apiKey: API_KEY, apps } = deployment
let mock: MockOpenAI
beforeAll(() => {
  mock = deployment.mock
})
/** A dying instance gives up on its dead backends within the lease, as a killed process would. */
const FAST_FAIL = {
  TURNLINE_IO_BUDGET_MS: '2500',
  TURNLINE_STORAGE_TIMEOUT_MS: '1000',
  TURNLINE_COORDINATOR_TIMEOUT_MS: '1000',
}

interface Delivery {
  sessionId: string
  send(on: AppInstance): Promise<Response>
}

/** A signed delivery as captured on the wire: the same bytes every time it is sent. */
async function delivery(body = '{"event":"push"}'): Promise<Delivery> {
  const id = `msg_${crypto.randomUUID()}`
  const signed = signMessage(SECRET, body, id)
  return {
    sessionId: `wh-triage-${(await sha256Hex(id)).slice(0, 24)}`,
    send: (on) => fetch(`${on.url}/v1/webhooks/triage`, { method: 'POST', ...signed }),
  }
}

/** Sends until the answer is not 409 session_busy (a dead instance's lease), as a sender retries. */
async function sendUntilFree(d: Delivery, on: AppInstance): Promise<Response> {
  return vi.waitUntil(
    async () => {
      const answer = await d.send(on)
      if (answer.status !== 409) return answer
      const body = (await answer.json()) as { error: { code: string } }
      expect(body.error.code).toBe('session_busy')
      return undefined
    },
    { timeout: LEASE_MS * 5, interval: 250 },
  )
}

async function api(on: AppInstance, method: string, path: string) {
  return fetch(`${on.url}${path}`, { method, headers: { authorization: `Bearer ${API_KEY}` } })
}

async function turnsStarted(on: AppInstance, sessionId: string): Promise<number> {
  const events = await api(on, 'GET', `/v1/sessions/${sessionId}/events?after=-1`)
  expect(events.status).toBe(200)
  return (await events.text()).match(/"turn\.started"/g)?.length ?? 0
}

/** Waits until the work a 202 recorded is done (its status resource, `Location`). */
async function workDone(on: AppInstance, accepted: Response): Promise<void> {
  const headers = { authorization: `Bearer ${API_KEY}` }
  const { workState } = jsonCalls(() => on.url, headers)
  await workState(accepted.headers.get('location') ?? '', 'done')
}

/**
 * The delivery's first attempt, on an instance whose process dies at its PUT of the key that
 * holds `at` (of the delivery's session): a 5xx, nothing answered from a run.
 */
async function firstAttemptDies(
  d: Delivery,
  at: (sessionId: string) => string,
  mode: 'before' | 'after',
  background = false,
) {
  const dying = crashingFetch(
    (method, path) => method === 'PUT' && path.includes(at(d.sessionId)),
    mode,
  )
  const on = await apps.start({ fetch: dying.fetch }, { background, env: FAST_FAIL })
  expect((await d.send(on)).status).toBeGreaterThanOrEqual(500)
  expect(dying.crashed()).toBe(true)
}

const pointer = (sid: string) => `/acme/.turnline/sessions/${sid}.json`
const batch = (n: number) => (sid: string) =>
  `/.vtcode/sessions/${sid}/log/${String(n).padStart(10, '0')}.json`
/** The folder of the session's background work records (each named by its work id). */
const pendingWork = (sid: string) => `/.turnline/work/pending/acme/${sid}/`

describe('a webhook delivery resent after its first attempt died', () => {
  it.each([
    ['before its session was written', pointer, 'before'],
    ['after its session was created, before its turn', batch(0), 'after'],
  ] as const)(
    'runs once on the request path when the first attempt died %s',
    async (_, at, mode) => {
      mock.respond(() => ({ text: 'Handled.' }))
      const d = await delivery()
      await firstAttemptDies(d, at, mode)
      expect(mock.requests).toHaveLength(0)

      const restarted = await apps.start()
      const resent = await sendUntilFree(d, restarted)
      expect(resent.status).toBe(200)
      expect(await resent.json()).toMatchObject({
        session_id: d.sessionId,
        duplicate: at !== pointer,
        turn: { status: 'terminal' },
      })
      expect(mock.requests).toHaveLength(1)
      // Its run is recorded now: the same bytes again answer from it, on any instance.
      for (const on of [restarted, await apps.start()]) {
        const again = await d.send(on)
        expect(again.status).toBe(200)
        expect(await again.json()).toMatchObject({ duplicate: true, turn: { status: 'terminal' } })
      }
      expect(mock.requests).toHaveLength(1)
      expect(await turnsStarted(restarted, d.sessionId)).toBe(1)
      expect((await api(restarted, 'DELETE', `/v1/sessions/${d.sessionId}`)).status).toBe(204)
      const replay = await d.send(restarted)
      expect(replay.status).toBe(409)
      expect(await replay.json()).toMatchObject({ error: { code: 'conflict' } })
      expect(mock.requests).toHaveLength(1)
    },
  )

  it('never runs again a turn committed by the attempt that died, nor after its session is deleted', async () => {
    mock.respond(() => ({ text: 'Committed, never answered.' }))
    const d = await delivery()
    // The turn's commit is stored; the process dies before it marks the run recorded.
    await firstAttemptDies(d, batch(1), 'after')
    expect(mock.requests).toHaveLength(1)

    const restarted = await apps.start()
    const resent = await sendUntilFree(d, restarted)
    expect(resent.status).toBe(200)
    expect(await resent.json()).toMatchObject({ duplicate: true, turn: { status: 'terminal' } })
    expect(mock.requests).toHaveLength(1)
    expect((await api(restarted, 'DELETE', `/v1/sessions/${d.sessionId}`)).status).toBe(204)
    for (const on of [restarted, await apps.start()]) {
      const replay = await d.send(on)
      expect(replay.status).toBe(409)
      expect(await replay.json()).toMatchObject({ error: { code: 'conflict' } })
    }
    expect(mock.requests).toHaveLength(1)
  })

  it.each([
    ['before its session was written', pointer, 'before'],
    ['before its turn was recorded', pendingWork, 'before'],
    ['after its turn was recorded', pendingWork, 'after'],
  ] as const)(
    'runs once on the background path when the first attempt died %s',
    async (_, at, mode) => {
      mock.respond(() => ({ text: 'Handled in the background.' }))
      const d = await delivery()
      await firstAttemptDies(d, at, mode, true)

      const restarted = await apps.start(undefined, { background: true })
      const resent = await d.send(restarted)
      expect(resent.status).toBe(202)
      expect(await resent.json()).toMatchObject({
        session_id: d.sessionId,
        duplicate: at !== pointer,
      })
      await workDone(restarted, resent)
      const again = await d.send(await apps.start(undefined, { background: true }))
      expect(again.status).toBe(202)
      expect(await again.json()).toMatchObject({ duplicate: true })
      await workDone(restarted, again)
      expect(mock.requests).toHaveLength(1)
      expect(await turnsStarted(restarted, d.sessionId)).toBe(1)
    },
  )
})

describe('two identical deliveries at once', () => {
  it('run once on the request path, on two instances', async () => {
    mock.respond(() => ({ text: 'Once.' }))
    const [a, b] = [await apps.start(), await apps.start()]
    const d = await delivery()
    const answers = await Promise.all([d.send(a), d.send(b)])
    // Both answer from the one run, or one meets the other's turn (session_busy, retryable):
    // never refused as a replay.
    const bodies = await Promise.all(answers.map((answer) => answer.json()))
    for (const [i, answer] of answers.entries()) {
      if (answer.status !== 409) expect(answer.status).toBe(200)
      else expect(bodies[i]).toMatchObject({ error: { code: 'session_busy' } })
    }
    expect(answers.some((answer) => answer.status === 200)).toBe(true)
    const settled = await sendUntilFree(d, a)
    expect(await settled.json()).toMatchObject({ duplicate: true, turn: { status: 'terminal' } })
    expect(mock.requests).toHaveLength(1)
    expect(await turnsStarted(a, d.sessionId)).toBe(1)
  })

  it('run once on the background path, on two instances', async () => {
    mock.respond(() => ({ text: 'Once, later.' }))
    const a = await apps.start(undefined, { background: true })
    const b = await apps.start(undefined, { background: true })
    const d = await delivery()
    const answers = await Promise.all([d.send(a), d.send(b)])
    expect(answers.map((answer) => answer.status)).toEqual([202, 202])
    const runs = (await Promise.all(answers.map((answer) => answer.json()))) as {
      work_id: string
    }[]
    expect(new Set(runs.map((run) => run.work_id)).size).toBe(1)
    for (const [i, on] of [a, b].entries()) await workDone(on, answers[i] as Response)
    expect(mock.requests).toHaveLength(1)
    expect(await turnsStarted(b, d.sessionId)).toBe(1)
  })
})
