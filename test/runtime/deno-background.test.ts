import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startHookReceiver } from '../support/hook-receiver.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startDeno } from '../support/runtimes.ts'

/**
 * `deno serve` runs the background worker and the callback loop as `npm start` does: a turn
 * that prefers respond-async is answered 202 and run once by the process's own worker, its
 * completion callback reaches a real receiver (signed), and a loop run steps to its budget.
 */
const TOOL_SECRET = 'deno-background-tool-secret'
let mock: MockOpenAI
let receiver: Awaited<ReturnType<typeof startHookReceiver>>
let deno: RuntimeProcess

beforeAll(async () => {
  mock = await startMockOpenAI()
  // Single-tenant: tenant `local`, whose callback secret is HMAC-SHA256(TOOL_SECRET, 'local').
  receiver = await startHookReceiver(
    createHmac('sha256', TOOL_SECRET).update('local').digest('hex'),
  )
  deno = await startDeno({
    TURNLINE_STORE: 'memory',
    TURNLINE_SINGLE_TENANT: '1',
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'test-key',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
    TURNLINE_CALLBACK_ALLOW_HTTP: '1',
    TURNLINE_WORK_SWEEP_MS: '500',
  })
}, 60_000)

afterAll(async () => {
  await deno?.stop()
  await receiver?.close()
  await mock?.close()
})

const { call, workState } = jsonCalls(() => deno.url)

describe('Deno: background work in the deno serve process', () => {
  it('answers a respond-async turn 202, runs it once, and delivers its callback', async () => {
    const created = await call('POST', '/v1/sessions', {
      callback: { url: receiver.url('/hooks/deno') },
    })
    expect(created.status, created.text).toBe(201)
    const session = created.json().session_id as string
    mock.enqueue({ text: 'done on deno in the background' })
    const headers = { prefer: 'respond-async', 'idempotency-key': 'deno-bg-1' }
    const accepted = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' }, headers)
    expect(accepted.status, `${accepted.text}\n${deno.output()}`).toBe(202)
    const location = accepted.headers.get('location') ?? ''
    const done = await workState(location, 'done')
    expect(done.turn).toEqual({ turn_id: 'turn-1', status: 'completed' })

    const hooks = () =>
      receiver.received.filter(
        (hook) => (hook.body.data as { session_id?: string })?.session_id === session,
      )
    await vi.waitUntil(() => hooks().length > 0, { timeout: 60_000, interval: 50 })
    const [hook] = hooks()
    expect(hook?.path).toBe('/hooks/deno')
    expect(hook?.signatureValid).toBe(true)
    expect(hook?.body).toMatchObject({
      type: 'turn.completed',
      data: { session_id: session, turn_id: 'turn-1', result: 'done on deno in the background' },
    })
    expect(mock.requests).toHaveLength(1)
    const events = await call('GET', `/v1/sessions/${session}/events?after=-1`)
    expect(events.text.match(/"turn\.started"/g)).toHaveLength(1)
  })

  it('runs a loop to its budget with POST /v1/loops/{id}/run', async () => {
    mock.reset()
    mock.enqueue({ text: 'step 0' }, { text: 'step 1' })
    const created = await call('POST', '/v1/loops', {
      loop_id: 'deno-loop',
      task: 'Tidy.',
      budget: { max_steps: 2, max_tokens: 1_000_000, max_cost_usd: 10 },
    })
    expect(created.status, created.text).toBe(201)
    const started = await call('POST', '/v1/loops/deno-loop/run', {})
    expect(started.status, started.text).toBe(202)
    const stopped = async () => {
      const loop = (await call('GET', '/v1/loops/deno-loop')).json()
      return (loop.run as { state?: string } | undefined)?.state === 'stopped' ? loop : undefined
    }
    const loop = await vi.waitUntil(stopped, { timeout: 60_000, interval: 100 })
    expect(loop).toMatchObject({
      step_index: 2,
      status: 'paused',
      run: { stop_reason: 'budget' },
    })
    expect(mock.requests).toHaveLength(2)
  })
})
