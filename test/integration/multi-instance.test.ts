import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import type { Batch } from '../../src/contract/batch.ts'
import { parseStoredBatch } from '../../src/contract/batch-encoding.ts'
import { listAll } from '../../src/store/list-all.ts'
import { type CallbackRelay, startCallbackRelay } from '../support/callback-relay.ts'
import { gate } from '../support/gate.ts'
import type { MockOpenAI, MockRequest } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { type RunnerProcess, startRunnerProcess } from '../support/runner-process.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { until } from '../support/until.ts'

/**
 * Three `npm start` processes (functions/entries/node.ts) on one S3 bucket (moto) and one Upstash
 * (the REST proxy on redis-server), as a load balancer would spread a client over them, with
 * the mock OpenAI server counting model calls and the reference runner as its own process.
 * Sessions hop between instances: one serial history per session, one model call per
 * Idempotency-Key, a runner callback accepted once whichever instance it reaches, and a turn
 * whose instance is killed is finished by another without a second history.
 */
const API_KEY = 'multi-instance-key-0123456789'
const AUTH = { authorization: `Bearer ${API_KEY}` }
const RUNNER_SECRET = 'multi-instance-runner-secret-0123'
/** The lease a dead instance's turn keeps: short, so the crash case waits seconds, not a minute. */
const LEASE_MS = 3000

interface Instance {
  name: string
  url: string
  entry: NodeEntry
}

let backends: TestBackends
let bucket: TestBackends['bucket']
let mock: MockOpenAI
let relay: CallbackRelay
let runner: RunnerProcess
let runnerRoot = ''
let instances: Instance[] = []
let A: Instance
let B: Instance
let C: Instance

beforeAll(async () => {
  backends = await startTestBackends('multi')
  ;({ bucket, mock } = backends)
  relay = await startCallbackRelay()
  runnerRoot = await mkdtemp(join(tmpdir(), 'turnline-multi-runner-'))
  // The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700).
  await chmod(runnerRoot, 0o711)
  runner = await startRunnerProcess({
    root: runnerRoot,
    secret: RUNNER_SECRET,
    callbackUrl: relay.url,
  })
  // Everything an instance knows comes from this environment, the same for all of them.
  const env = backends.env({
    PORT: '0',
    TURNLINE_API_KEYS: `${API_KEY}=acme`,
    TURNLINE_TOOL_SECRET: 'multi-instance-tool-secret-0123',
    TURNLINE_RUNNER_URL: runner.url,
    TURNLINE_RUNNER_SECRET: RUNNER_SECRET,
    TURNLINE_LEASE_MS: String(LEASE_MS),
    // A command wait beyond 2 s ends the invocation: the turn answers `waiting`.
    TURNLINE_INVOCATION_BUDGET_MS: '2000',
  })
  const start = async (name: string): Promise<Instance> => {
    const entry = startNodeEntry(env)
    return { name, entry, url: await entry.listening() }
  }
  instances = await Promise.all(['A', 'B', 'C'].map(start))
  ;[A, B, C] = instances as [Instance, Instance, Instance]
}, 120_000)

afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.entry.stop()))
  await runner?.stop()
  await relay?.close()
  await backends?.close()
  if (runnerRoot) await rm(runnerRoot, { recursive: true, force: true })
})

interface Answer {
  status: number
  headers: Headers
  body: Record<string, unknown>
}

async function call(
  on: Instance,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${on.url}${path}`, {
    method,
    headers: { ...AUTH, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  let parsed: Record<string, unknown>
  try {
    parsed = JSON.parse(text) as Record<string, unknown>
  } catch {
    throw new Error(`${on.name} ${method} ${path}: ${response.status} ${text}`)
  }
  return { status: response.status, headers: response.headers, body: parsed }
}

async function createSession(on: Instance): Promise<string> {
  const created = await call(on, 'POST', '/v1/sessions', {})
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return created.body.session_id as string
}

const turn = (on: Instance, sessionId: string, input: string, key?: string) =>
  call(
    on,
    'POST',
    `/v1/sessions/${sessionId}/turns`,
    { input },
    key ? { 'idempotency-key': key } : {},
  )

/**
 * Sends a turn to every instance at once while the model holds its reply (`held`): the reply is
 * released once all but one have been refused, so no machine is slow enough for the running
 * turn to end before another arrives.
 */
let held = gate()
async function race(send: (on: Instance) => Promise<Answer>): Promise<Answer[]> {
  held = gate()
  onTestFinished(held.open)
  const release = held.open
  let refused = 0
  return Promise.all(
    instances.map((on) =>
      send(on).then((answer) => {
        if (answer.status === 409 && ++refused === instances.length - 1) release()
        return answer
      }),
    ),
  )
}

const errorCode = (answer: Answer) => (answer.body.error as { code?: string } | undefined)?.code

interface FeedLine {
  seq: number
  event: { type: string; item?: { type: string; text?: string; exit_code?: number } }
}

/** The session's events as one instance serves them (NDJSON from seq 0). */
async function feed(on: Instance, sessionId: string): Promise<{ text: string; lines: FeedLine[] }> {
  const response = await fetch(`${on.url}/v1/sessions/${sessionId}/events`, { headers: AUTH })
  const text = await response.text()
  expect(response.status, text).toBe(200)
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as FeedLine)
  return { text, lines }
}

/** The commit batches of a session, read from the bucket, in order. */
async function storedBatches(sessionId: string): Promise<Batch[]> {
  const store = bucket.store()
  const { objects } = await listAll(store, '')
  const keys = objects
    .map((o) => o.key)
    .filter((key) => key.includes(`/.vtcode/sessions/${sessionId}/log/`))
    .sort()
  const batches: Batch[] = []
  for (const key of keys) {
    const object = await store.get(key)
    if (!object) throw new Error(`${key} vanished`)
    batches.push(await parseStoredBatch(object.body))
  }
  return batches
}

/**
 * One serial history: the committed batches are numbered 0, 1, 2… with no gap, each starts at
 * the seq after the previous one's last event, every turn started exactly once (no duplicate
 * turn from a lost race) and finished once; and every instance serves exactly those events.
 */
async function expectOneSerialHistory(sessionId: string, turns: number): Promise<FeedLine[]> {
  const batches = await storedBatches(sessionId)
  expect(batches.map((b) => b.batch)).toEqual(batches.map((_, i) => i))
  let nextSeq = 0
  const started: string[] = []
  let completed = 0
  for (const batch of batches) {
    expect(batch.first_seq, `batch ${batch.batch}`).toBe(nextSeq)
    nextSeq += batch.events.length
    for (const { event } of batch.events) {
      if (event.type === 'turn.started') started.push(batch.turn_id ?? '?')
      if (event.type === 'turn.completed' || event.type === 'turn.failed') completed += 1
    }
  }
  expect(new Set(started).size, `turns started: ${started.join(', ')}`).toBe(started.length)
  expect(started).toHaveLength(turns)
  expect(completed).toBe(turns)

  const served = await Promise.all(instances.map((on) => feed(on, sessionId)))
  const [first] = served
  if (!first) throw new Error('no instance')
  expect(first.lines.map((l) => l.seq)).toEqual(first.lines.map((_, i) => i))
  expect(first.lines).toHaveLength(nextSeq)
  for (const other of served) expect(other.text).toBe(first.text)
  return first.lines
}

/** A model that runs a slow command, waits for it (beyond the invocation), then reports. */
function commandAgent(command: string) {
  return (request: MockRequest) => {
    const messages = request.body.messages as { role: string; content: string }[]
    const last = messages.at(-1)
    if (last?.role === 'user') {
      const args = { cmd: command, yield_time_ms: 250 }
      return { toolCalls: [{ id: 'c1', name: 'exec_command', arguments: JSON.stringify(args) }] }
    }
    const result = JSON.parse(last?.content ?? '{}') as {
      session_id?: string
      is_exited?: boolean
      exit_code?: number
    }
    if (result.is_exited === false) {
      const args = { session_id: result.session_id, action: 'wait', wait_timeout_seconds: 30 }
      return { toolCalls: [{ id: 'c2', name: 'write_stdin', arguments: JSON.stringify(args) }] }
    }
    return { text: `exit ${result.exit_code ?? 'unknown'}` }
  }
}

describe('three instances on one bucket and one coordinator', () => {
  it('runs one turn at a time per session, whichever instance gets it: one serial history', async () => {
    mock.reset()
    mock.respond(() => ({ text: 'one at a time', hold: held.promise }))
    const sessionId = await createSession(A)
    for (const round of [1, 2, 3]) {
      const calls = mock.requests.length
      const answers = await race((on) => turn(on, sessionId, `round ${round} via ${on.name}`))
      const statuses = answers.map((a) => a.status).sort()
      expect(statuses, JSON.stringify(answers.map((a) => a.body))).toEqual([200, 409, 409])
      for (const busy of answers.filter((a) => a.status === 409)) {
        expect(errorCode(busy)).toBe('session_busy')
        expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(0)
      }
      expect(answers.find((a) => a.status === 200)?.body.status).toBe('completed')
      expect(mock.requests.length - calls).toBe(1)
    }
    await expectOneSerialHistory(sessionId, 3)
  })

  it('calls the model once per Idempotency-Key, sent to every instance at once and again', async () => {
    mock.reset()
    let answered = 0
    mock.respond(() => ({ text: `answer number ${++answered}`, hold: held.promise }))
    const sessionId = await createSession(B)
    const key = 'multi-instance-key-1'
    const concurrent = await race((on) => turn(on, sessionId, 'once', key))
    expect(concurrent.map((a) => a.status).sort()).toEqual([200, 409, 409])
    for (const busy of concurrent.filter((a) => a.status === 409)) {
      expect(errorCode(busy)).toBe('session_busy')
    }
    const first = concurrent.find((a) => a.status === 200)?.body
    expect(first?.status).toBe('completed')

    const again = await Promise.all(instances.map((on) => turn(on, sessionId, 'once', key)))
    for (const answer of again) {
      expect(answer.status).toBe(200)
      expect(answer.body).toEqual(first)
    }
    expect(mock.requests).toHaveLength(1)
    // The key remembers its request on every instance.
    const reused = await turn(C, sessionId, 'something else', key)
    expect(reused.status).toBe(422)
    expect(errorCode(reused)).toBe('idempotency_key_reused')
    const lines = await expectOneSerialHistory(sessionId, 1)
    const messages = lines.filter(
      (l) => l.event.type === 'item.completed' && l.event.item?.type === 'agent_message',
    )
    expect(messages.map((l) => l.event.item?.text)).toEqual(['answer number 1'])
  })

  it('accepts the runner callback once on another instance, refuses its replay on a third', async () => {
    mock.reset()
    mock.respond(commandAgent('sleep 5; echo finished; exit 7'))
    const sessionId = await createSession(A)
    relay.target = B.url

    const waiting = await turn(A, sessionId, 'run the slow command')
    expect(waiting.status, JSON.stringify(waiting.body)).toBe(200)
    expect(waiting.body.status).toBe('waiting')
    const callsWhileWaiting = mock.requests.length
    expect(callsWhileWaiting).toBe(2)

    // The command the turn waits on: the runner's exec session that write_stdin waits for.
    const waitCall = (
      waiting.body.events as { item?: { tool_name?: string; arguments?: unknown } }[]
    )
      .map((e) => e.item)
      .findLast((item) => item?.tool_name === 'write_stdin')
    const execSessionId = (waitCall?.arguments as { session_id?: string } | undefined)?.session_id
    expect(execSessionId).toMatch(/^run-/)
    // The runner reports every command that exits (the orient phase's git log too): this one's.
    const ofCommand = () =>
      relay.deliveries.filter((d) => JSON.parse(d.body).exec_session_id === execSessionId)
    const [delivery] = await until('the exit callback', () =>
      ofCommand().length > 0 ? ofCommand() : undefined,
    )
    if (!delivery) throw new Error('no delivery')
    expect(delivery.to).toBe(B.url)
    expect(delivery.status, delivery.answer).toBe(202)
    expect(JSON.parse(delivery.answer)).toMatchObject({ resumed: true })

    // B continued the turn that ran on A: one model call, the real exit code.
    expect(mock.requests.length - callsWhileWaiting).toBe(1)
    const lines = await expectOneSerialHistory(sessionId, 1)
    const outputs = lines.filter((l) => l.event.item?.type === 'tool_output')
    expect(outputs.at(-1)?.event.item).toMatchObject({ exit_code: 7 })
    expect(lines.at(-1)?.event.type).toBe('turn.completed')

    // The same signed message on C (and on A): the coordinator remembers it was accepted.
    for (const other of [C, A]) {
      const replay = await fetch(`${other.url}/v1/runner/callback`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      })
      expect(replay.status).toBe(401)
      expect(await replay.json()).toMatchObject({
        error: { code: 'unauthorized', details: { reason: 'replayed' } },
      })
    }
    // Nothing resumed again: no model call, no event, and the runner delivered it only once.
    // (Both replays were refused before any work began, so nothing is left in flight.)
    expect(mock.requests.length - callsWhileWaiting).toBe(1)
    expect((await feed(C, sessionId)).lines).toHaveLength(lines.length)
    expect(ofCommand()).toHaveLength(1)
  })

  it('finishes on another instance a turn whose instance was killed mid-turn, once', async () => {
    mock.reset()
    let calls = 0
    const never = gate()
    onTestFinished(never.open)
    mock.respond(() =>
      ++calls === 1
        ? { text: 'never delivered: its instance dies', hold: never.promise }
        : { text: 'answered after the crash' },
    )
    const sessionId = await createSession(B)
    const key = 'multi-instance-crash-key'
    const onA = turn(A, sessionId, 'survive a crash', key).then(
      (answer) => answer,
      (error: unknown) => error,
    )
    await until('the model call of A', () => (mock.requests.length > 0 ? true : undefined))
    const group = A.entry.child.pid
    if (group === undefined) throw new Error('A has no pid')
    process.kill(-group, 'SIGKILL')
    await A.entry.stop()
    instances = instances.filter((on) => on !== A)
    expect(await onA).toBeInstanceOf(Error)

    // The dead instance's lease holds the session until it lapses, on every instance.
    let busy = 0
    let retried: Answer | undefined
    const deadline = Date.now() + LEASE_MS * 5
    while (Date.now() < deadline) {
      const answer = await turn(B, sessionId, 'survive a crash', key)
      if (answer.status !== 409) {
        retried = answer
        break
      }
      expect(errorCode(answer)).toBe('session_busy')
      busy += 1
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    expect(busy).toBeGreaterThan(0)
    expect(retried?.status, JSON.stringify(retried?.body)).toBe(200)
    expect(retried?.body.status).toBe('completed')
    expect(mock.requests).toHaveLength(2)

    const onC = await turn(C, sessionId, 'survive a crash', key)
    expect(onC.status).toBe(200)
    expect(onC.body).toEqual(retried?.body)
    expect(mock.requests).toHaveLength(2)
    const lines = await expectOneSerialHistory(sessionId, 1)
    const messages = lines.filter(
      (l) => l.event.type === 'item.completed' && l.event.item?.type === 'agent_message',
    )
    expect(messages.map((l) => l.event.item?.text)).toEqual(['answered after the crash'])
  })
})
