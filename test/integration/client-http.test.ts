import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  type SeqEvent,
  TurnlineApiError,
  TurnlineClient,
  TurnlineConnectionError,
  turnEvents,
} from '../../client/index.ts'
import type { AppInstance } from '../support/app-instance.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'

/**
 * The typed client (client/) against a real server: the app on S3 (moto) and Upstash
 * (redis-server through the REST proxy), the real OpenAI adapter talking to the mock OpenAI
 * server, over real HTTP. Every answer the client returns went through its zod schemas.
 */
const API_KEY = 'api-key-client-0123456789abcdef'
let deployment: TestDeployment
let mock: MockOpenAI
let app: AppInstance
let client: TurnlineClient

beforeAll(async () => {
  deployment = await startTestDeployment('client', {
    TURNLINE_API_KEYS: `${API_KEY}=client-tenant`,
    TURNLINE_LOG: 'off',
  })
  ;({ mock, app } = deployment)
  client = new TurnlineClient({ baseUrl: app.url, apiKey: API_KEY })
})
afterAll(() => deployment?.close())
beforeEach(() => mock.reset())

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = []
  for await (const item of items) all.push(item)
  return all
}

const types = (items: SeqEvent[]) => items.map((item) => item.event.type)

describe('TurnlineClient against a real server', () => {
  it('creates a session, streams a turn, reads the events back and completes it', async () => {
    const created = await client.createSession({
      workspace: 'client-e2e',
      instructions: 'Be brief.',
    })
    expect(created).toMatchObject({ status: 'active' })
    const id = created.session_id

    mock.enqueue({ text: 'Hello from the mock, streamed.', frameDelayMs: 20 })
    const turn = client.streamTurn(id, { input: 'Say hello' })
    const streamed: SeqEvent[] = []
    for await (const item of turn) streamed.push(item)
    const result = await turn.result()
    expect(result.status).toBe('completed')
    expect(types(streamed)).toEqual([
      'turn.started',
      'item.started',
      'item.completed',
      'turn.completed',
    ])
    // The SSE ids are the seqs, dense after thread.started (seq 0).
    expect(streamed.map((s) => s.seq)).toEqual([1, 2, 3, 4])
    expect(streamed.map((s) => s.id)).toEqual(['1', '2', '3', '4'])
    expect(turnEvents(result)).toEqual(streamed)
    expect(turn.idempotencyKey).toMatch(/^tl-[0-9a-f-]{36}$/)
    const completed = streamed[2]?.event
    expect(completed?.type === 'item.completed' && completed.item).toMatchObject({
      type: 'agent_message',
      text: 'Hello from the mock, streamed.',
    })

    // The events feed: every event once, validated; NDJSON pages and the plain iterator agree.
    const page = await client.readEvents(id, { after: 0, limit: 2 })
    expect(page.events.map((e) => e.seq)).toEqual([1, 2])
    expect(page.nextSeq).toBe(3)
    const all = await collect(client.events(id, { limit: 2 }))
    expect(all.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4])
    expect(all.slice(1)).toEqual(streamed)

    // A JSON (unstreamed) turn, then the session view and the listing.
    mock.enqueue({ text: 'Second answer.' })
    const second = await client.stepTurn(id, { input: 'Again' })
    expect(second).toMatchObject({ status: 'completed', next_seq: 9 })
    const view = await client.getSession(id)
    expect(view).toMatchObject({ session_id: id, workspace: 'client-e2e', turn_count: 2 })
    expect(view.config.instructions).toBe('Be brief.')
    expect(view.budget.status).toBe('ok')
    const listed = await collect(client.sessions({ workspace: 'client-e2e', limit: 1 }))
    expect(listed.map((s) => s.session_id)).toEqual([id])
    const { workspaces } = await client.listWorkspaces()
    expect(workspaces).toContainEqual({ workspace: 'client-e2e', sessions: 1 })
    const { turns } = await client.listTurns(id)
    expect(turns.map((t) => t.turn_id)).toEqual(['turn-1', 'turn-2'])
    expect(view.title).toBe(turns[0]?.input?.input)

    // complete, with its events streamed to onEvent; the followed feed ends at thread.completed.
    const ended: SeqEvent[] = []
    const done = await client.complete(id, { onEvent: (e) => void ended.push(e) })
    expect(done.status).toBe('terminal')
    expect(types(ended)).toEqual(['thread.completed'])
    const followed = await collect(client.events(id, { follow: true, after: 7 }))
    expect(types(followed)).toEqual(['turn.completed', 'thread.completed'])
    const caughtUp = await collect(client.events(id, { follow: true, lastEventId: '9' }))
    expect(caughtUp).toEqual([])
    mock.assertDone()
  })

  it('maps refusals to TurnlineApiError with the status, code, details and key', async () => {
    const missing = await client.getSession('no-such-session').catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(TurnlineApiError)
    expect(missing).toMatchObject({ status: 404, code: 'not_found', retryable: false })

    const stranger = new TurnlineClient({ baseUrl: app.url, apiKey: 'wrong-key-0123456789' })
    await expect(stranger.listSessions()).rejects.toMatchObject({
      name: 'TurnlineApiError',
      status: 401,
      code: 'unauthorized',
    })

    const bad = (await client
      .createSession({ workspace: '../escape' })
      .catch((error: unknown) => error)) as TurnlineApiError
    expect(bad).toMatchObject({ status: 400, code: 'invalid_input' })
    expect(JSON.stringify(bad.details)).toContain('workspace')

    const { session_id: id } = await client.createSession()
    mock.enqueue({ text: 'first' })
    await client.stepTurn(id, { input: 'one' }, { idempotencyKey: 'client-key-1' })
    // The same key again answers the first outcome without a model call…
    const replay = await client.stepTurn(id, { input: 'one' }, { idempotencyKey: 'client-key-1' })
    expect(replay.status).toBe('completed')
    // …and with another request it is refused, naming the key.
    const reused = await client
      .stepTurn(id, { input: 'two' }, { idempotencyKey: 'client-key-1' })
      .catch((error: unknown) => error)
    expect(reused).toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
      idempotencyKey: 'client-key-1',
    })
    // Streamed, the refusal comes before the stream starts, with the same mapping.
    const streamedReuse = client.streamTurn(
      id,
      { input: 'three' },
      { idempotencyKey: 'client-key-1' },
    )
    await expect(streamedReuse.result()).rejects.toMatchObject({ status: 422 })

    await client.cancel(id)
    await expect(client.stepTurn(id, { input: 'late' })).rejects.toMatchObject({
      status: 409,
      code: 'session_completed',
    })
    expect(mock.requests).toHaveLength(1)

    // Deleted: every read is 404 after, and deleting again too.
    await client.deleteSession(id)
    await expect(client.getSession(id)).rejects.toMatchObject({ status: 404, code: 'not_found' })
    await expect(client.deleteSession(id)).rejects.toMatchObject({ status: 404 })
    const { session_id: doomed } = await client.createSession({ workspace: 'client-doomed' })
    await client.deleteWorkspace('client-doomed')
    await expect(client.getSession(doomed)).rejects.toMatchObject({ status: 404 })
    await client.deleteWorkspace('client-doomed') // again: nothing left to erase, still 204
    await expect(client.deleteWorkspace('client-never')).rejects.toMatchObject({ status: 404 })

    const usage = await client.usage()
    expect(usage).toMatchObject({ tenant: 'client-tenant', tokens: { limit: null } })
    expect(usage.requests.today).toBeGreaterThan(0)

    const nowhere = new TurnlineClient({ baseUrl: 'http://127.0.0.1:9' })
    await expect(nowhere.health()).rejects.toBeInstanceOf(TurnlineConnectionError)
  })

  it('steers, forks, hands off and runs exec and Open Responses calls', async () => {
    const { session_id: id } = await client.createSession({ workspace: 'client-more' })
    const accepted = await client.steer(id, 'Also mention the weather.')
    expect(accepted).toMatchObject({ pending: 1 })
    mock.enqueue({ text: 'Steered answer.' })
    const steered = await client.stepTurn(id)
    expect(types(turnEvents(steered))).toContain('interjected')
    expect(JSON.stringify(mock.requests[0]?.body)).toContain('Also mention the weather.')

    const handoff = await client.handoff(id, { state_summary: 'Half done.' })
    expect(handoff.handoff).toMatchObject({ state_summary: 'Half done.', target_agent: 'next' })
    const orientation = await client.getOrientation(id)
    expect(orientation.session_id).toBe(id)

    const note = await client.artifacts.append('client-more', 'notes', 'remember this')
    expect(note.content).toContain('remember this')
    const doc = await client.artifacts.put('client-more', 'spec', { content: '# Spec\n' })
    const listed = await client.artifacts.list('client-more')
    expect(listed.artifacts.find((a) => a.kind === 'spec')).toMatchObject({ exists: true })
    await expect(
      client.artifacts.put('client-more', 'spec', { content: 'x' }, { ifMatch: '"stale"' }),
    ).rejects.toMatchObject({ status: 409, code: 'conflict' })
    await client.artifacts.put(
      'client-more',
      'spec',
      { content: '# Spec 2\n' },
      { ifMatch: doc.etag },
    )
    await client.artifacts.delete('client-more', 'spec')
    await expect(client.artifacts.get('client-more', 'spec')).rejects.toMatchObject({ status: 404 })

    mock.enqueue({ text: 'Exec answer.' })
    const exec = await collect(client.exec({ prompt: 'Run once', workspace: 'client-more' }))
    expect(exec.map((e) => e.type)).toEqual([
      'thread.started',
      'turn.started',
      'item.started',
      'item.completed',
      'turn.completed',
      'thread.completed',
    ])

    mock.enqueue({ text: 'Responses answer.' })
    const response = await client.responses.create({ input: 'Hi there' })
    expect(response).toMatchObject({ object: 'response', status: 'completed' })
    const again = await client.responses.get(response.id)
    expect(again.id).toBe(response.id)
    const replayed = await collect(client.responses.events(response.id))
    expect(replayed[0]?.type).toBe('response.created')
    expect(replayed.map((e) => e.type)).toContain('response.completed')
    expect(replayed.map((e) => e.sequence_number)).toEqual(replayed.map((_, i) => i))
    mock.assertDone()
  })
})
