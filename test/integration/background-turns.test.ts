import { createHmac } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { serializeWorkRecord } from '../../src/contract/work-record.ts'
import { workIdOf } from '../../src/core/background/queue-work.ts'
import { listAll } from '../../src/store/list-all.ts'
import { gate } from '../support/gate.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'

/**
 * Background turns on `npm start` as a real process (the fs store, its own worker): a turn that
 * prefers respond-async is answered 202 and run once, also when the request is retried; a
 * webhook delivery is answered 202 at once and a redelivery is a duplicate, never a second run;
 * an exec run answers 202 and ends its session; a record whose trigger was lost is found by the
 * sweep.
 */
const RAW_SECRET = Buffer.from('background-secret-0123456789')
let dir: string
let mock: MockOpenAI
let server: NodeEntry
let url = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-background-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-test',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_WORK_SWEEP_MS: '250',
    TURNLINE_WEBHOOKS: JSON.stringify({
      triage: {
        secret: `whsec_${RAW_SECRET.toString('base64')}`,
        tenant: 'local',
        session: { instructions: 'Triage incoming issues.' },
        prompt: 'New issue event: {{body}}',
      },
    }),
  })
  url = await server.listening()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const { call, workState } = jsonCalls(() => url)

function deliver(body: string, id: string, at = Math.floor(Date.now() / 1000)) {
  const timestamp = String(at)
  const signature = createHmac('sha256', RAW_SECRET)
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64')
  return call('POST', '/v1/webhooks/triage', JSON.parse(body), {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  })
}

async function pendingRecords(): Promise<string[]> {
  const files = new FsObjectStore({ root: join(dir, 'data') })
  return (await listAll(files, '.turnline/work/pending/')).objects.map((o) => o.key)
}

const ASYNC = { prefer: 'respond-async' }

describe('background turns on npm start', () => {
  it('answers 202 at once, and the same 202 to a retry with the same key; runs the turn once', async () => {
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    const held = gate()
    mock.enqueue({ text: 'done in the background', hold: held.promise })
    const headers = { ...ASYNC, 'idempotency-key': 'bg-key-1' }
    const first = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' }, headers)
    expect(first.status, first.text).toBe(202)
    expect(first.headers.get('preference-applied')).toBe('respond-async')
    const location = first.headers.get('location') ?? ''
    expect(location).toBe(`/v1/sessions/${session}/work/${first.json().work_id}`)
    expect(first.json()).toMatchObject({
      session_id: session,
      idempotency_key: 'bg-key-1',
      duplicate: false,
      status: 'queued',
      links: { status: location, events: `/v1/sessions/${session}/events` },
    })
    await workState(location, 'running')

    const retry = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' }, headers)
    expect(retry.status).toBe(202)
    expect(retry.headers.get('location')).toBe(location)
    expect(retry.json()).toEqual({ ...first.json(), duplicate: true })
    // the same key with another request is refused, as for any turn
    const other = await call('POST', `/v1/sessions/${session}/turns`, { input: 'else' }, headers)
    expect(other.status).toBe(422)

    held.open()
    const done = await workState(location, 'done')
    expect(done.turn).toEqual({ turn_id: 'turn-1', status: 'completed' })
    // After the run its record may be gone: the same work, answered again; the key replays.
    const again = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' }, headers)
    expect(again.status).toBe(202)
    expect(again.headers.get('location')).toBe(location)
    expect({ ...again.json(), duplicate: false }).toEqual(first.json())
    await workState(location, 'done')
    await expect.poll(pendingRecords, { timeout: 15_000 }).toEqual([])
    expect(mock.requests).toHaveLength(1)
    const events = await call('GET', `/v1/sessions/${session}/events?after=-1`)
    expect(events.text.match(/"turn\.started"/g)).toHaveLength(1)
    expect(events.text).toContain('done in the background')
  })

  it('answers a webhook 202 with duplicate: false, a redelivery duplicate: true, and runs once', async () => {
    mock.reset()
    const held = gate()
    mock.enqueue({ text: 'Labelled as bug.', hold: held.promise })
    const body = JSON.stringify({ action: 'opened', title: 'Crash on save' })
    const first = await deliver(body, 'msg_bg_1')
    expect(first.status, first.text).toBe(202)
    const { session_id, work_id } = first.json() as { session_id: string; work_id: string }
    expect(first.json()).toEqual({ session_id, duplicate: false, work_id })
    const location = first.headers.get('location') ?? ''
    await workState(location, 'running')
    const redelivered = await deliver(body, 'msg_bg_1')
    expect(redelivered.status).toBe(202)
    expect(redelivered.json()).toEqual({ session_id, duplicate: true, work_id })
    held.open()
    expect((await workState(location, 'done')).turn).toMatchObject({ status: 'terminal' })
    const late = await deliver(body, 'msg_bg_1')
    expect(late.json()).toEqual({ session_id, duplicate: true, work_id })
    await workState(location, 'done')
    await expect.poll(pendingRecords, { timeout: 15_000 }).toEqual([])
    expect(mock.requests).toHaveLength(1)
    const view = await call('GET', `/v1/sessions/${session_id}`)
    expect(view.json()).toMatchObject({ status: 'completed', turn_count: 1 })
  })

  it('answers 409 to a delivery replayed after its session was deleted, never a second run', async () => {
    mock.reset()
    mock.enqueue({ text: 'Handled.' })
    const [body, at] = [JSON.stringify({ action: 'closed' }), Math.floor(Date.now() / 1000)]
    const first = await deliver(body, 'msg_bg_replay', at)
    expect(first.status, first.text).toBe(202)
    const { session_id } = first.json() as { session_id: string }
    await workState(first.headers.get('location') ?? '', 'done')
    // The worker lets the session go just after the work is done.
    const remove = async () => (await call('DELETE', `/v1/sessions/${session_id}`)).status
    await expect.poll(remove, { timeout: 10_000 }).toBe(204)
    const replay = await deliver(body, 'msg_bg_replay', at)
    expect(replay.status, replay.text).toBe(409)
    expect(mock.requests).toHaveLength(1)
  })

  it('runs an exec in the background: 202, the same session for a retry, the session ended', async () => {
    mock.reset()
    mock.enqueue({ text: 'exec answer' })
    const headers = { ...ASYNC, 'idempotency-key': 'exec-key-1' }
    const first = await call('POST', '/v1/exec', { prompt: 'list todos' }, headers)
    expect(first.status, first.text).toBe(202)
    const retry = await call('POST', '/v1/exec', { prompt: 'list todos' }, headers)
    expect(retry.json()).toEqual({ ...first.json(), duplicate: true })
    // The key with other settings is another request: 422, nothing queued.
    const other = { prompt: 'list todos', instructions: 'be brief' }
    const reused = await call('POST', '/v1/exec', other, headers)
    expect(reused.status, reused.text).toBe(422)
    expect(reused.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } })
    const location = first.headers.get('location') ?? ''
    expect((await workState(location, 'done')).turn).toMatchObject({ status: 'terminal' })
    const view = await call('GET', `/v1/sessions/${first.json().session_id}`)
    expect(view.json()).toMatchObject({ status: 'completed', turn_count: 1 })
    expect(mock.requests).toHaveLength(1)
  })

  it('runs a loop step in the background once, also when the request is retried', async () => {
    mock.reset()
    const created = await call('POST', '/v1/loops', { task: 'tidy the repo' })
    expect(created.status, created.text).toBe(201)
    const loopId = created.json().loop_id as string
    const held = gate()
    mock.enqueue({ text: 'step done', hold: held.promise })
    const headers = { ...ASYNC, 'idempotency-key': 'loop-step-key-1' }
    const first = await call('POST', `/v1/loops/${loopId}/step`, {}, headers)
    expect(first.status, first.text).toBe(202)
    const location = first.headers.get('location') ?? ''
    expect(first.json()).toMatchObject({
      loop_id: loopId,
      duplicate: false,
      links: { status: location, loop: `/v1/loops/${loopId}` },
    })
    await workState(location, 'running')
    const retry = await call('POST', `/v1/loops/${loopId}/step`, {}, headers)
    expect(retry.json()).toEqual({ ...first.json(), duplicate: true })
    held.open()
    await expect.poll(pendingRecords, { timeout: 15_000 }).toEqual([])
    const loop = await call('GET', `/v1/loops/${loopId}`)
    expect(loop.json()).toMatchObject({ step_index: 1 })
    // the same request again, after the step ran: the same 202, and no second step
    const late = await call('POST', `/v1/loops/${loopId}/step`, {}, headers)
    expect(late.json()).toEqual({ ...first.json(), duplicate: true })
    await expect.poll(pendingRecords, { timeout: 15_000 }).toEqual([])
    expect((await call('GET', `/v1/loops/${loopId}`)).json()).toMatchObject({ step_index: 1 })
    expect(mock.requests).toHaveLength(1)
    expect((await call('GET', location)).status).toBe(404)
  })

  it('shows why work cannot run, and takes it out of the queue', async () => {
    mock.reset()
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    // Nothing to continue and no input: the engine refuses the turn (invalid_input).
    const headers = { ...ASYNC, 'idempotency-key': 'refused-1' }
    const first = await call('POST', `/v1/sessions/${session}/turns`, {}, headers)
    expect(first.status, first.text).toBe(202)
    const location = first.headers.get('location') ?? ''
    const failed = await workState(location, 'failed')
    expect(failed).toMatchObject({ attempts: 1, error: { code: 'invalid_input' } })
    expect(String((failed.error as { message: string }).message)).toContain('input is required')
    await expect.poll(pendingRecords, { timeout: 15_000 }).toEqual([])
    const files = new FsObjectStore({ root: join(dir, 'data') })
    const kept = await listAll(files, '.turnline/work/failed/')
    expect(kept.objects.map((o) => o.key)).toEqual([
      `.turnline/work/failed/local/${session}/${first.json().work_id}.json`,
    ])
    expect(mock.requests).toHaveLength(0)
  })

  it('finds by its sweep a record whose trigger was lost', async () => {
    mock.reset()
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    mock.enqueue({ text: 'found by the sweep' })
    // Recorded as a route records it, but no bell rang: only the sweep can find it.
    const key = 'lost-trigger-key'
    const workId = await workIdOf(key)
    const files = new FsObjectStore({ root: join(dir, 'data') })
    const record = {
      format: 'turnline.work' as const,
      version: 1 as const,
      work_id: workId,
      kind: 'turn' as const,
      source: 'turns' as const,
      tenant: 'local',
      session_id: session,
      idempotency_key: key,
      fingerprint: '0'.repeat(64),
      request: { input: 'swept' },
      created_at: new Date().toISOString(),
      attempts: 0,
    }
    await files.put(
      `.turnline/work/pending/local/${session}/${workId}.json`,
      new TextEncoder().encode(serializeWorkRecord(record)),
      { ifNoneMatch: '*' },
    )
    const done = await workState(`/v1/sessions/${session}/work/${workId}`, 'done')
    expect(done.turn).toEqual({ turn_id: 'turn-1', status: 'completed' })
    expect(mock.requests).toHaveLength(1)
    await expect.poll(pendingRecords, { timeout: 15_000 }).toEqual([])
  })
})
