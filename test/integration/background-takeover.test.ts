import { createHmac } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { echoTool } from '../support/engine-harness.ts'
import { gate } from '../support/gate.ts'
import { jsonCaller } from '../support/json-call.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'
import { until } from '../support/until.ts'

/**
 * Two `npm start` processes on one S3 bucket (moto) and one Upstash (the REST proxy on
 * redis-server): a background turn runs on A, which is killed (SIGKILL) after the turn committed
 * its HTTP tool call and while the model answers the tool's result; B's worker finds the record
 * in its sweep, waits out A's lease, continues the turn from its last commit — the tool is not
 * called again — and finishes it. Nothing else wakes B: only the record in the store.
 */
const API_KEY = 'background-takeover-key-0123456789'
const AUTH = { authorization: `Bearer ${API_KEY}` }
const MASTER = 'background-takeover-tool-secret'
const LEASE_MS = 3000

let backends: TestBackends
let mock: MockOpenAI
let receiver: Awaited<ReturnType<typeof startToolReceiver>>
let A: NodeEntry
let B: NodeEntry
let urlA = ''
let urlB = ''
let runnerRoot = ''

beforeAll(async () => {
  backends = await startTestBackends('bgtake')
  mock = backends.mock
  runnerRoot = await mkdtemp(join(tmpdir(), 'turnline-bgtake-runner-'))
  await chmod(runnerRoot, 0o711)
  receiver = await startToolReceiver(createHmac('sha256', MASTER).update('acme').digest('hex'))
  const env = backends.env({
    PORT: '0',
    TURNLINE_API_KEYS: `${API_KEY}=acme`,
    TURNLINE_TOOL_SECRET: MASTER,
    TURNLINE_TOOL_ALLOWED_HOSTS: receiver.host,
    TURNLINE_LEASE_MS: String(LEASE_MS),
    TURNLINE_WORK_SWEEP_MS: '300',
    TURNLINE_RUNNER_ROOT: runnerRoot,
  })
  A = startNodeEntry(env)
  B = startNodeEntry(env)
  ;[urlA, urlB] = await Promise.all([A.listening(), B.listening()])
}, 120_000)

afterAll(async () => {
  await Promise.all([A?.stop(), B?.stop()])
  await receiver?.close()
  await backends?.close()
  if (runnerRoot) await rm(runnerRoot, { recursive: true, force: true })
})

const call = jsonCaller(AUTH)

describe('a background turn whose instance is killed mid-run', () => {
  it('is taken over by another instance after the lease, without calling the committed tool again', async () => {
    const created = await call(urlA, 'POST', '/v1/sessions', { tools: [echoTool(receiver.url)] })
    const session = created.json().session_id as string
    const never = gate() // A's second model call is answered by nobody: A dies in it
    mock.enqueue(
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"weather"}' }] },
      { text: 'never sent', hold: never.promise },
      { text: 'finished on B' },
    )
    const headers = { prefer: 'respond-async', 'idempotency-key': 'takeover-1' }
    const accepted = await call(
      urlA,
      'POST',
      `/v1/sessions/${session}/turns`,
      { input: 'go' },
      headers,
    )
    expect(accepted.status, accepted.text).toBe(202)
    const location = accepted.headers.get('location') ?? ''

    // A called the tool (its invocation committed first) and waits on the model's answer.
    await until('A in its second model call', () => (mock.requests.length >= 2 ? true : undefined))
    expect(receiver.calls).toHaveLength(1)
    const recorded = await listAll(backends.bucket.store(), '.turnline/work/pending/')
    expect(recorded.objects).toHaveLength(1)
    const pid = A.child.pid
    if (pid === undefined) throw new Error('A has no pid')
    process.kill(-pid, 'SIGKILL')
    await A.exited
    never.open()

    // B was never told: its sweep finds the record and, once A's lease lapsed, takes over.
    const deadline = Date.now() + 60_000
    let status: Record<string, unknown> = {}
    while (Date.now() < deadline) {
      status = (await call(urlB, 'GET', location)).json()
      if (status.state === 'done') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(status).toMatchObject({
      state: 'done',
      turn: { turn_id: 'turn-1', status: 'completed' },
    })
    expect(receiver.calls).toHaveLength(1)
    expect(mock.requests).toHaveLength(3)
    const events = await call(urlB, 'GET', `/v1/sessions/${session}/events?after=-1`)
    const lines = events.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines.map((line: { seq: number }) => line.seq)).toEqual(
      lines.map((_: unknown, i: number) => i),
    )
    const types = lines.map((line: { event: { type: string } }) => line.event.type)
    expect(types.filter((type: string) => type === 'turn.started')).toHaveLength(1)
    expect(events.text).toContain('finished on B')
    expect(events.text).not.toContain('never sent')
    const pending = await listAll(backends.bucket.store(), '.turnline/work/pending/')
    expect(pending.objects).toEqual([])
  })
})
