import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { eventually, listDeliveries } from '../support/callback-polling.ts'
import { useEntryWithMock } from '../support/entry-with-mock.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'
import { jsonCalls } from '../support/json-calls.ts'

/**
 * A loop's schedule on `npm start`: the server's own worker fires it (its sweep, every 250 ms
 * here) at the first minute of its cron after the loop's creation — no outside scheduler — and
 * the run steps the loop to its budget, once, and reports its stop with `loop.stopped`.
 */
const KEY = 'acme-loop-schedule-key-0123456789'
const TOOL_SECRET = 'loop-schedule-deployment-secret'
let receiver: Awaited<ReturnType<typeof startHookReceiver>>

const env: Record<string, string> = {
  TURNLINE_API_KEYS: `${KEY}=acme`,
  TURNLINE_TOOL_SECRET: TOOL_SECRET,
  TURNLINE_WORK_SWEEP_MS: '250',
  TURNLINE_CALLBACK_ALLOW_HTTP: '1',
  TURNLINE_CALLBACK_RETRY_FIRST_MS: '50',
  TURNLINE_CALLBACK_RETRY_MAX_MS: '200',
  TURNLINE_CALLBACK_SWEEP_MS: '200',
  // No embedded runner (it would need the command sandbox): nothing here runs a command.
  TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
  TURNLINE_RUNNER_SECRET: 'loop-schedule-runner-secret',
}

// Before the server starts (hooks run in order): the one loopback address callbacks may reach.
beforeAll(async () => {
  receiver = await startHookReceiver(await deriveTenantSecret(TOOL_SECRET, 'acme'))
  env.TURNLINE_EGRESS_ALLOW = receiver.host
})

afterAll(async () => {
  await receiver?.close()
})

const entry = useEntryWithMock('loop-schedule', env)

const { call } = jsonCalls(() => entry.url, { authorization: `Bearer ${KEY}` })

describe('a loop schedule on npm start', () => {
  it('starts a run at the next minute of its cron and reports its stop', {
    timeout: 180_000,
  }, async () => {
    entry.mock.enqueue({ text: 'scheduled step' })
    const created = await call('POST', '/v1/loops', {
      loop_id: 'node-cron',
      task: 'Tidy.',
      schedule: { cron: '* * * * *' },
      session: { callback: { url: receiver.url('/hooks/loop') } },
      budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 5 },
    })
    expect(created.status, created.text).toBe(201)
    const loop = await eventually(
      'the scheduled run to stop',
      async () => {
        const view = (await call('GET', '/v1/loops/node-cron')).json()
        const run = view.run as { stop_reason?: string } | undefined
        return run?.stop_reason ? view : undefined
      },
      150_000,
    )
    expect(loop).toMatchObject({
      step_index: 1,
      run: { trigger: 'schedule', stop_reason: 'budget' },
    })
    const stopped = await eventually('the loop.stopped delivery', async () => {
      const list = await listDeliveries(entry.url, KEY, 'node-cron-step-0')
      const found = list.find((d) => d.type === 'loop.stopped')
      return found?.state === 'delivered' ? found : undefined
    })
    expect(stopped.notice.data.loop).toMatchObject({ loop_id: 'node-cron', reason: 'budget' })
    const hooks = receiver.received.filter((h) => h.body.type === 'loop.stopped')
    expect(hooks.map((h) => [h.headers['webhook-id'], h.signatureValid])).toEqual([
      [stopped.id, true],
    ])
    expect(entry.mock.requests).toHaveLength(1)
  })
})
