import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { listAll } from '../../src/store/list-all.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'
import { importLambdaBundle } from '../support/lambda-bundle.ts'
import {
  invokeStreaming,
  isStreamingHandler,
  type StreamingHandler,
  urlEvent,
} from '../support/lambda-runtime.ts'
import { MotoSqsQueue, type SqsMessage, sqsEvent } from '../support/moto-sqs.ts'
import { requireServices } from '../support/services.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * Background work on Lambda as deployed: the bundle's `index.handler` records the work and sends
 * its bell to a queue on moto_server's SQS; the test plays Lambda's SQS event source (receive a
 * batch, invoke `index.work`, delete what it did not report failed) and the EventBridge schedule
 * (`index.sweep`). A bell delivered twice runs nothing twice; a lost one is found by the sweep;
 * a loop run goes to its budget one bell after the other; callbacks go out on their own bell.
 */
const KEY = 'lambda-bg-key-0123456789'
const TOOL_SECRET = 'lambda-bg-tool-secret-0123'
const AWS_KEYS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' }
type WorkHandler = (event: unknown) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>

let out = ''
let backends: TestBackends
let queue: MotoSqsQueue
let receiver: Awaited<ReturnType<typeof startHookReceiver>>
let handler: StreamingHandler
let work: WorkHandler
let sweep: () => Promise<{ found: number }>

beforeAll(async () => {
  const services = requireServices()
  backends = await startTestBackends('lambda-bg')
  queue = await MotoSqsQueue.create(services.s3.endpoint, 'work')
  receiver = await startHookReceiver(await deriveTenantSecret(TOOL_SECRET, 'tenant-b'))
  // The function's role: the SDK's credential chain reads them when the first bell is sent.
  Object.assign(process.env, AWS_KEYS)
  const loaded = await importLambdaBundle(
    backends.env({
      TURNLINE_API_KEYS: `${KEY}=tenant-b`,
      TURNLINE_TOOL_SECRET: TOOL_SECRET,
      TURNLINE_WORK_QUEUE_URL: queue.url,
      TURNLINE_CALLBACK_ALLOW_HTTP: '1',
      TURNLINE_EGRESS_ALLOW: receiver.host,
    }),
  )
  out = loaded.out
  if (!isStreamingHandler(loaded.module.handler)) throw new Error('index.handler is not streaming')
  handler = loaded.module.handler
  work = loaded.module.work as WorkHandler
  sweep = loaded.module.sweep as typeof sweep
}, 180_000)

afterAll(async () => {
  for (const name of Object.keys(AWS_KEYS)) delete process.env[name]
  await queue?.destroy()
  await receiver?.close()
  await backends?.close()
  if (out) await rm(out, { recursive: true, force: true })
})

const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }

async function call(method: string, path: string, body?: unknown, headers = {}) {
  const answer = await invokeStreaming(
    handler,
    urlEvent(method, path, { ...auth, ...headers }, body),
  )
  return {
    status: answer.prelude.statusCode,
    headers: answer.prelude.headers,
    text: answer.body,
    json: () => JSON.parse(answer.body) as Record<string, unknown>,
  }
}

/** What Lambda's event source does with one batch: invoke, then delete what succeeded. */
async function deliver(messages: SqsMessage[]): Promise<string[]> {
  const result = await work(sqsEvent(messages))
  const failed = result.batchItemFailures.map((failure) => failure.itemIdentifier)
  for (const message of messages) {
    if (!failed.includes(message.MessageId)) await queue.delete(message)
  }
  return failed
}

/** Receives whatever is visible, waiting (polling) until at least one message is. */
function receiveSome(): Promise<SqsMessage[]> {
  return vi.waitUntil(
    async () => {
      const messages = await queue.receive()
      return messages.length > 0 ? messages : undefined
    },
    { timeout: 60_000, interval: 50 },
  )
}

/** Delivers batches until `done` holds (a loop run rings its next step after each one). */
function pumpUntil<T>(done: () => Promise<T | undefined>): Promise<T> {
  return vi.waitUntil(
    async () => {
      const found = await done()
      if (found !== undefined) return found
      // A message may be put off (a busy session): it comes back, and is delivered then.
      const messages = await queue.receive()
      if (messages.length > 0) await deliver(messages)
      return undefined
    },
    { timeout: 90_000, interval: 50 },
  )
}

const bellOf = (message: SqsMessage) => JSON.parse(message.Body) as Record<string, unknown>

async function turnStarts(sessionId: string): Promise<number> {
  const events = await call('GET', `/v1/sessions/${sessionId}/events?after=-1`)
  expect(events.status, events.text).toBe(200)
  return events.text.match(/"turn\.started"/g)?.length ?? 0
}

async function pendingRecords(): Promise<string[]> {
  const pending = await listAll(backends.bucket.store(), '.turnline/work/pending/')
  return pending.objects.map((object) => object.key)
}

/** A new session (`config` its settings) and a turn recorded for the background: its 202. */
async function acceptedTurn(key: string, text: string, config: Record<string, unknown> = {}) {
  const created = await call('POST', '/v1/sessions', config)
  expect(created.status, created.text).toBe(201)
  const session = created.json().session_id as string
  backends.mock.enqueue({ text })
  const accepted = await call(
    'POST',
    `/v1/sessions/${session}/turns`,
    { input: 'go' },
    { prefer: 'respond-async', 'idempotency-key': key },
  )
  expect(accepted.status, accepted.text).toBe(202)
  const workId = accepted.json().work_id as string
  return { session, workId, location: `/v1/sessions/${session}/work/${workId}` }
}

describe('Lambda: background work through SQS (index.handler, index.work, index.sweep)', () => {
  it('answers 202, rings one bell, and the bell runs exactly one turn; its callback follows', async () => {
    const { session, workId, location } = await acceptedTurn(
      'lambda-bg-1',
      'done on lambda in the background',
      { callback: { url: receiver.url('/hooks/lambda') } },
    )
    // The record is in the store before the answer, and exactly one bell is on the queue.
    expect(await pendingRecords()).toHaveLength(1)
    expect(await queue.waiting()).toBe(1)
    const [bell, ...more] = await receiveSome()
    expect(more).toEqual([])
    if (!bell) throw new Error('no bell')
    expect(bellOf(bell)).toEqual({
      format: 'turnline.trigger',
      version: 1,
      kind: 'work',
      tenant: 'tenant-b',
      session_id: session,
      work_id: workId,
    })
    expect(await deliver([bell])).toEqual([])
    const status = await call('GET', location)
    expect(status.json()).toMatchObject({ state: 'done', turn: { status: 'completed' } })
    expect(backends.mock.requests).toHaveLength(1)
    expect(await turnStarts(session)).toBe(1)

    // The commit recorded a notice and rang the outbox's bell: delivered when it is run.
    const [callbacks] = await receiveSome()
    if (!callbacks) throw new Error('no callbacks bell')
    expect(bellOf(callbacks)).toMatchObject({ kind: 'callbacks' })
    expect(await deliver([callbacks])).toEqual([])
    const hooks = receiver.received.filter(
      (hook) => (hook.body.data as { session_id?: string })?.session_id === session,
    )
    expect(hooks.map((hook) => hook.body.type)).toEqual(['turn.completed'])
    expect(hooks[0]?.signatureValid).toBe(true)

    // The same bell again, late (SQS delivers at least once): nothing runs.
    await queue.send(bell.Body)
    expect(await deliver(await receiveSome())).toEqual([])
    expect(backends.mock.requests).toHaveLength(1)
    expect(await turnStarts(session)).toBe(1)
    expect(await pendingRecords()).toEqual([])
  })

  it('runs one turn when the same bell arrives twice in one batch', async () => {
    backends.mock.reset()
    const { session, location } = await acceptedTurn('lambda-bg-dup', 'once only')
    const [bell] = await receiveSome()
    if (!bell) throw new Error('no bell')
    await queue.send(bell.Body)
    const copies = [bell, ...(await receiveSome())]
    expect(copies.map(bellOf)).toEqual([bellOf(bell), bellOf(bell)])
    // Both copies at once: one runs the turn, the other finds it running (put off until its
    // lease says: a batch item failure, delivered again) or done.
    await deliver(copies)
    await pumpUntil(async () => {
      const status = (await call('GET', location)).json()
      return status.state === 'done' && (await queue.waiting()) === 0 ? status : undefined
    })
    expect(backends.mock.requests).toHaveLength(1)
    expect(await turnStarts(session)).toBe(1)
  })

  it('finds work whose bell was lost with index.sweep', async () => {
    backends.mock.reset()
    const { session, workId, location } = await acceptedTurn('lambda-bg-lost', 'found by the sweep')
    // The bell is lost: received and deleted by nobody who runs it.
    for (const message of await receiveSome()) await queue.delete(message)
    expect(await queue.waiting()).toBe(0)
    expect((await sweep()).found).toBe(1)
    const rung = await receiveSome()
    expect(rung.map(bellOf)).toMatchObject([{ kind: 'work', session_id: session, work_id: workId }])
    expect(await deliver(rung)).toEqual([])
    expect((await call('GET', location)).json()).toMatchObject({ state: 'done' })
    expect(await turnStarts(session)).toBe(1)
    expect(await pendingRecords()).toEqual([])
  })

  it('runs a loop to its budget with POST /v1/loops/{id}/run, each step once', async () => {
    backends.mock.reset()
    backends.mock.enqueue({ text: 'step 0' }, { text: 'step 1' }, { text: 'step 2' })
    const created = await call('POST', '/v1/loops', {
      loop_id: 'lambda-loop',
      task: 'Tidy.',
      budget: { max_steps: 3, max_tokens: 1_000_000, max_cost_usd: 10 },
    })
    expect(created.status, created.text).toBe(201)
    const started = await call('POST', '/v1/loops/lambda-loop/run', {})
    expect(started.status, started.text).toBe(202)
    const loop = await pumpUntil(async () => {
      const current = (await call('GET', '/v1/loops/lambda-loop')).json()
      return (current.run as { state?: string })?.state === 'stopped' ? current : undefined
    })
    expect(loop).toMatchObject({
      step_index: 3,
      status: 'paused',
      run: { stop_reason: 'budget', first_step: 0 },
    })
    expect(backends.mock.requests).toHaveLength(3)
    for (const step of [0, 1, 2]) expect(await turnStarts(`lambda-loop-step-${step}`)).toBe(1)
    expect(await pendingRecords()).toEqual([])
  })

  it('puts off a message whose record is of a newer version, fails a corrupt one, and drops a malformed one', async () => {
    const store = backends.bucket.store()
    const [newer, corrupt] = ['ab'.repeat(16), 'cd'.repeat(16)]
    const pending = (workId: string) => `.turnline/work/pending/tenant-b/s-corrupt/${workId}.json`
    // A record a newer release wrote (a rolling deploy): left for the instances that read it.
    await store.put(
      pending(newer),
      new TextEncoder().encode('{"format":"turnline.work","version":2}'),
      {},
    )
    // A record that is not one: failed as it is, out of the queue, never delivered again.
    await store.put(
      pending(corrupt),
      new TextEncoder().encode('{"format":"turnline.work","version":1'),
      {},
    )
    const trigger = (workId: string) =>
      JSON.stringify({
        format: 'turnline.trigger',
        version: 1,
        kind: 'work',
        tenant: 'tenant-b',
        session_id: 's-corrupt',
        work_id: workId,
      })
    await queue.send(trigger(newer))
    await queue.send(trigger(corrupt))
    await queue.send('not a trigger')
    const messages: SqsMessage[] = []
    while (messages.length < 3) messages.push(...(await receiveSome()))
    const putOff = messages.find((message) => message.Body.includes(newer))
    expect(await deliver(messages)).toEqual([putOff?.MessageId])
    expect(await store.get(pending(corrupt))).toBeNull()
    const failed = await store.get(pending(corrupt).replace('/pending/', '/failed/'))
    expect(new TextDecoder().decode(failed?.body)).toBe('{"format":"turnline.work","version":1')
    // Hidden for the pause the delivery gave (2 s), not the 300 s it was received for: it comes
    // back, received a second time; the malformed and the corrupt ones were deleted.
    const [again, ...others] = await receiveSome()
    expect(others).toEqual([])
    expect(again?.MessageId).toBe(putOff?.MessageId)
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2')
    await store.delete(pending(newer))
    // The record is gone now: this delivery finds nothing to run and succeeds.
    if (!again) throw new Error('not delivered again')
    expect(await deliver([again])).toEqual([])
  })
})
