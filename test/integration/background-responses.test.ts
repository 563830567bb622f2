import { describe, expect, it } from 'vitest'
import { useEntryWithMock } from '../support/entry-with-mock.ts'
import { gate } from '../support/gate.ts'
import { jsonCaller } from '../support/json-call.ts'
import { until } from '../support/until.ts'

/**
 * `POST /v1/responses` with `background: true` on `npm start` (one worker slot, so a second
 * response waits its turn): answered at once with the response resource, `background: true`;
 * `GET` follows it from `queued` to `completed`; a retry with the same key is the same response;
 * `POST …/cancel` cancels one still queued and one running, and neither runs to an answer.
 */
const entry = useEntryWithMock('bg-responses', {
  TURNLINE_WORK_SWEEP_MS: '250',
  TURNLINE_WORK_CONCURRENCY: '1',
})
const call = jsonCaller({})

/** Reads the response until its status is `status` (the worker runs it in the background). */
async function responseStatus(id: string, status: string) {
  const deadline = Date.now() + 30_000
  for (;;) {
    const answer = await call(entry.url, 'GET', `/v1/responses/${id}`)
    expect(answer.status, answer.text).toBe(200)
    if (answer.json().status === status) return answer.json()
    if (Date.now() > deadline) throw new Error(`response never became ${status}: ${answer.text}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const RUNNING = ['queued', 'in_progress']

describe('background responses', () => {
  it('answers at once, runs in the background, and answers a retry with the same response', async () => {
    const held = gate()
    entry.mock.enqueue({ text: 'the background answer', hold: held.promise })
    const body = { input: 'Say something.', background: true }
    const key = { 'idempotency-key': 'bg-resp-1' }
    const first = await call(entry.url, 'POST', '/v1/responses', body, key)
    expect(first.status, first.text).toBe(200)
    expect(first.json()).toMatchObject({ object: 'response', background: true, store: true })
    expect(RUNNING).toContain(first.json().status)
    const id = first.json().id as string
    await until('the model asked', () => (entry.mock.requests.length === 1 ? true : undefined))
    await responseStatus(id, 'in_progress')
    const retry = await call(entry.url, 'POST', '/v1/responses', body, key)
    expect(retry.json()).toMatchObject({ id, background: true })
    held.open()
    const done = await responseStatus(id, 'completed')
    expect(JSON.stringify(done.output)).toContain('the background answer')
    expect(entry.mock.requests).toHaveLength(1)
    const streamed = await call(entry.url, 'POST', '/v1/responses', { ...body, stream: true })
    expect(streamed.status).toBe(400)
  })

  it('cancels a queued response and a running one; neither gets an answer', async () => {
    entry.mock.reset()
    const held = gate()
    // A's answer streams for at least 2.4 s (48 frames, 50 ms apart) once released: longer than
    // the 1 s between the running turn's looks at the cancel flag, so it sees the cancel.
    entry.mock.enqueue({
      text: 'never delivered '.repeat(12),
      hold: held.promise,
      frameDelayMs: 50,
    })
    const running = await call(entry.url, 'POST', '/v1/responses', { input: 'A', background: true })
    await until('A runs', () => (entry.mock.requests.length === 1 ? true : undefined))
    // One worker slot, taken by A: B waits.
    const queued = await call(entry.url, 'POST', '/v1/responses', { input: 'B', background: true })
    const b = queued.json().id as string
    expect(queued.json().status).toBe('queued')
    expect((await call(entry.url, 'GET', `/v1/responses/${b}`)).json().status).toBe('queued')

    const cancelB = await call(entry.url, 'POST', `/v1/responses/${b}/cancel`)
    expect(cancelB.status, cancelB.text).toBe(200)
    expect(cancelB.json()).toMatchObject({ id: b, status: 'cancelled', background: true })
    const a = running.json().id as string
    const cancelA = await call(entry.url, 'POST', `/v1/responses/${a}/cancel`)
    expect(cancelA.json()).toMatchObject({ id: a, status: 'cancelled' })
    held.open()
    await responseStatus(a, 'cancelled')
    await responseStatus(b, 'cancelled')
    expect(entry.mock.requests).toHaveLength(1)

    entry.mock.enqueue({ text: 'C' })
    const plain = await call(entry.url, 'POST', '/v1/responses', { input: 'C' }, {})
    expect(plain.json()).toMatchObject({ status: 'completed', background: false })
    const notBackground = await call(entry.url, 'POST', `/v1/responses/${plain.json().id}/cancel`)
    expect(notBackground.status).toBe(400)
  })
})
