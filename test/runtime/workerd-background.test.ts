import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createDeps } from '../../functions/deps.ts'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { listAll } from '../../src/store/list-all.ts'
import { deploymentEnv } from '../support/app-instance.ts'
import { gate } from '../support/gate.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startWorkerd } from '../support/runtimes.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'
import { startUpstashProxy, type UpstashProxy } from '../support/upstash-proxy.ts'

/**
 * Background work on Cloudflare Workers, in workerd through `wrangler dev` (Miniflare runs the
 * Queue's broker inside workerd; the producer binding and the `queue` handler are wrangler.toml's
 * own), on S3 (moto) and Upstash (the proxy on redis-server): a turn preferring respond-async is
 * answered 202 and run by the Queue's consumer, once, although its message is delivered twice;
 * its completion callback reaches a receiver right after the commit, with no cron trigger fired;
 * a record whose message was lost is found by the cron trigger's sweep; a loop run steps to its
 * end on its own.
 */
const TOOL_SECRET = 'workerd-background-tool-secret'
const ASYNC = { prefer: 'respond-async' }
const HOOK_SECRET = Buffer.from('workerd-background-webhook-secret')
let bucket: Awaited<ReturnType<typeof createTestBucket>> | undefined
let proxy: UpstashProxy | undefined
let mock: MockOpenAI
let receiver: Awaited<ReturnType<typeof startHookReceiver>>
let worker: RuntimeProcess | undefined
let env: Record<string, string> = {}

beforeAll(async () => {
  const services = requireServices()
  bucket = await createTestBucket(services.s3, 'wbg')
  proxy = await startUpstashProxy({ redisUrl: services.redisUrl })
  mock = await startMockOpenAI()
  receiver = await startHookReceiver(await deriveTenantSecret(TOOL_SECRET, 'local'))
  env = deploymentEnv({
    s3: services.s3,
    bucket: bucket.bucket,
    upstash: proxy,
    modelBaseURL: mock.baseURL,
    extra: {
      TURNLINE_SINGLE_TENANT: '1',
      TURNLINE_TOOL_SECRET: TOOL_SECRET,
      TURNLINE_CALLBACK_ALLOW_HTTP: '1',
      TURNLINE_WEBHOOKS: JSON.stringify({
        triage: {
          secret: `whsec_${HOOK_SECRET.toString('base64')}`,
          tenant: 'local',
          session: { instructions: 'Triage incoming issues.' },
          prompt: 'New issue event: {{body}}',
        },
      }),
      // A delivery put back for a busy session comes again within seconds, not a minute.
      TURNLINE_LEASE_MS: '4000',
    },
  })
  worker = await startWorkerd(env, ['--test-scheduled'])
})

afterAll(async () => {
  await worker?.stop()
  await receiver?.close()
  await mock?.close()
  await proxy?.close()
  await bucket?.destroy()
})

const { call, workState } = jsonCalls(() => {
  if (!worker) throw new Error('workerd is not running')
  return worker.url
})

/** Waits for `probe` to answer something (an event, no fixed sleep); fails with the log. */
function until<T>(what: string, probe: () => Promise<T | undefined>, timeout = 50_000) {
  return vi
    .waitUntil(probe, { timeout, interval: 100 })
    .catch((error: unknown) =>
      Promise.reject(new Error(`${what}\n--- workerd ---\n${worker?.output()}`, { cause: error })),
    ) as Promise<T>
}

const turnStarts = async (session: string) =>
  (
    (await call('GET', `/v1/sessions/${session}/events?after=-1`)).text.match(/"turn\.started"/g) ??
    []
  ).length

const pending = async () =>
  bucket ? (await listAll(bucket.store(), '.turnline/work/pending/')).objects : []

/** A webhook delivery signed as Standard Webhooks senders sign it. */
function deliver(body: string, id: string) {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', HOOK_SECRET)
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64')
  return call('POST', '/v1/webhooks/triage', JSON.parse(body), {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  })
}

/** Lines of the Worker's log with `msg`, parsed. */
function logLines(msg: string): Record<string, unknown>[] {
  return (worker?.output() ?? '')
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`))
    .map((line) => JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>)
}

describe('background work on Workers (Queue consumer, cron sweep)', () => {
  it('answers 202, runs the turn once through the Queue although its message came twice, and calls back', async () => {
    // A turn held in its model call keeps the consumer busy: wrangler dev's broker delivers one
    // batch at a time, so the two messages of the next turn wait, and arrive in one batch.
    const blocker = (await call('POST', '/v1/sessions', {})).json().session_id as string
    const first = gate()
    mock.enqueue({ text: 'first', hold: first.promise })
    const running = await call('POST', `/v1/sessions/${blocker}/turns`, { input: 'a' }, ASYNC)
    expect(running.status, running.text).toBe(202)
    await workState(running.headers.get('location') ?? '', 'running')

    const created = await call('POST', '/v1/sessions', {
      callback: { url: receiver.url('/hooks/local') },
    })
    expect(created.status, created.text).toBe(201)
    const session = created.json().session_id as string
    const second = gate()
    mock.enqueue({ text: 'done on the queue', hold: second.promise })
    const headers = { ...ASYNC, 'idempotency-key': 'wbg-1' }
    const accepted = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' }, headers)
    expect(accepted.status, accepted.text).toBe(202)
    expect(accepted.headers.get('preference-applied')).toBe('respond-async')
    const location = accepted.headers.get('location') ?? ''
    // The same request again: the same 202, and a second message for the same record.
    const retry = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' }, headers)
    expect(retry.status).toBe(202)
    expect(retry.json()).toEqual({ ...accepted.json(), duplicate: true })
    const workId = accepted.json().work_id as string
    const deliveries = () => logLines('work message').filter((l) => l.work === workId)

    first.open()
    // Both messages run at once: one runs the turn, the other meets its lease and is put back.
    await until('the second delivery', async () =>
      deliveries().some((l) => l.outcome === 'busy') ? true : undefined,
    )
    second.open()
    const done = await workState(location, 'done')
    expect(done.turn).toEqual({ turn_id: 'turn-1', status: 'completed' })
    // Delivered again after the pause the lease gave, it finds the record gone.
    await until('the put-back delivery', async () =>
      deliveries().some((l) => l.outcome === 'gone') ? true : undefined,
    )
    expect(
      deliveries()
        .map((l) => l.outcome)
        .sort(),
    ).toEqual(['busy', 'done', 'gone'])
    expect(mock.requests).toHaveLength(2)
    expect(await turnStarts(session)).toBe(1)
    expect(await turnStarts(blocker)).toBe(1)
    expect(await pending()).toEqual([])

    // The callback went out after the commit, through the queue: no cron trigger has run.
    const hook = await until('the completion callback', async () =>
      receiver.received.find(
        (h) => (h.body.data as { session_id?: string } | undefined)?.session_id === session,
      ),
    )
    expect(hook.signatureValid).toBe(true)
    expect(hook.body).toMatchObject({ type: 'turn.completed' })
    expect(logLines('work sweep')).toEqual([])
  })

  it('answers a webhook 202 and a background response at once, and runs each once', async () => {
    mock.reset()
    mock.enqueue({ text: 'Labelled as bug.' }, { text: 'the background answer' })
    const body = JSON.stringify({ action: 'opened', title: 'Crash on save' })
    const hook = await deliver(body, 'msg_wbg_1')
    expect(hook.status, hook.text).toBe(202)
    const { session_id, work_id } = hook.json() as { session_id: string; work_id: string }
    expect(hook.json()).toEqual({ session_id, duplicate: false, work_id })
    const location = hook.headers.get('location') ?? ''
    expect((await workState(location, 'done')).turn).toMatchObject({ status: 'terminal' })
    const redelivered = await deliver(body, 'msg_wbg_1')
    expect(redelivered.json()).toEqual({ session_id, duplicate: true, work_id })

    const request = { input: 'Say something.', background: true }
    const created = await call('POST', '/v1/responses', request)
    expect(created.status, created.text).toBe(200)
    expect(created.json()).toMatchObject({ object: 'response', background: true })
    const id = created.json().id as string
    const done = await until('the background response', async () => {
      const view = (await call('GET', `/v1/responses/${id}`)).json()
      return view.status === 'completed' ? view : undefined
    })
    expect(JSON.stringify(done.output)).toContain('the background answer')
    expect(mock.requests).toHaveLength(2)
    expect(await turnStarts(session_id)).toBe(1)
  })

  it('runs a record whose message was lost once the cron trigger sweeps', async () => {
    mock.reset()
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    // Recorded as the route records it, but no message is sent: a lost trigger.
    const deps = await createDeps(env)
    const queued = await new SessionService(deps.service).queueTurn(
      'local',
      session,
      { input: 'lost' },
      { idempotencyKey: 'wbg-lost' },
    )
    mock.enqueue({ text: 'found by the sweep' })
    const location = `/v1/sessions/${session}/work/${queued.work_id}`
    expect((await call('GET', location)).json().state).toBe('queued')

    const fired = await call('GET', '/__scheduled?cron=*+*+*+*+*')
    expect(fired.status, fired.text).toBe(200)
    expect((await workState(location, 'done')).turn).toMatchObject({ status: 'completed' })
    expect(await turnStarts(session)).toBe(1)
    expect(logLines('work sweep').at(-1)).toMatchObject({ records: 1 })
    // Retention belongs to the daily trigger (TURNLINE_RETENTION_CRON), not this one.
    expect(logLines('retention sweep')).toEqual([])
  })

  it('runs a loop to its end on its own', async () => {
    mock.reset()
    mock.enqueue({ text: 'step 0' }, { text: 'step 1' }, { text: 'step 2' })
    const created = await call('POST', '/v1/loops', {
      loop_id: 'wbg-loop',
      task: 'Tidy.',
      budget: { max_steps: 3, max_tokens: 1_000_000, max_cost_usd: 5 },
    })
    expect(created.status, created.text).toBe(201)
    const started = await call('POST', '/v1/loops/wbg-loop/run', {})
    expect(started.status, started.text).toBe(202)
    const loop = await until('the run to stop', async () => {
      const view = (await call('GET', '/v1/loops/wbg-loop')).json()
      return (view.run as { stop_reason?: string } | undefined)?.stop_reason ? view : undefined
    })
    expect(loop).toMatchObject({ step_index: 3, run: { stop_reason: 'budget' } })
    for (const step of [0, 1, 2]) expect(await turnStarts(`wbg-loop-step-${step}`)).toBe(1)
    expect(mock.requests).toHaveLength(3)
    expect(await pending()).toEqual([])
  })

  it('starts a scheduled loop run from the cron trigger', { timeout: 180_000 }, async () => {
    mock.reset()
    mock.enqueue({ text: 'scheduled step' })
    const created = await call('POST', '/v1/loops', {
      loop_id: 'wbg-cron',
      task: 'Tidy.',
      schedule: { cron: '* * * * *' },
      budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 5 },
    })
    expect(created.status, created.text).toBe(201)
    // Its first slot is the next minute after its creation: each tick until then starts nothing.
    let ticked = 0
    const loop = await until(
      'the scheduled run to stop',
      async () => {
        // A tick every 2 s or so (each lists the bucket's schedules, queue and outbox).
        if (Date.now() - ticked > 2000) {
          ticked = Date.now()
          await call('GET', '/__scheduled?cron=*+*+*+*+*')
        }
        const view = (await call('GET', '/v1/loops/wbg-cron')).json()
        const run = view.run as { stop_reason?: string } | undefined
        return run?.stop_reason ? view : undefined
      },
      150_000,
    )
    expect(loop).toMatchObject({
      step_index: 1,
      run: { trigger: 'schedule', stop_reason: 'budget' },
    })
    expect(await turnStarts('wbg-cron-step-0')).toBe(1)
    expect(mock.requests).toHaveLength(1)
  })

  it('answers an exec retried with its key as the same run, with other settings 422', async () => {
    mock.reset()
    mock.enqueue({ text: 'exec on the queue' })
    const exec = (body: object) =>
      call('POST', '/v1/exec', body, { ...ASYNC, 'idempotency-key': 'x' })
    const first = await exec({ prompt: 'ls' })
    expect((await exec({ prompt: 'ls' })).json()).toEqual({ ...first.json(), duplicate: true })
    const reused = await exec({ prompt: 'ls', instructions: 'be brief' })
    expect(reused.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } })
    await workState(first.headers.get('location') ?? '', 'done')
    expect(mock.requests).toHaveLength(1)
  })
})
