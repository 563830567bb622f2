import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { type SeqEvent, TurnlineClient, turnEvents } from '../../client/index.ts'
import type { AppInstance } from '../support/app-instance.ts'
import { type CuttingProxy, startCuttingProxy } from '../support/cutting-proxy.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'

/**
 * The client's streams survive real connection loss: a TCP proxy between client and server
 * tears connections in the middle of an SSE frame, and the server's own follow limit (1 s here)
 * ends followed feeds. The events feed resumes with Last-Event-ID and a keyed turn by sending
 * it again with its Idempotency-Key; either way every event arrives exactly once, in order, and
 * the turn runs once.
 */
let deployment: TestDeployment
let mock: MockOpenAI
let app: AppInstance
let direct: TurnlineClient
const proxies: CuttingProxy[] = []

beforeAll(async () => {
  deployment = await startTestDeployment('resume', {
    TURNLINE_FOLLOW_MAX_SECONDS: '1',
    TURNLINE_FOLLOW_POLL_MS: '50',
    TURNLINE_LOG: 'off',
  })
  ;({ mock, app } = deployment)
  direct = new TurnlineClient({ baseUrl: app.url })
})
afterAll(async () => {
  for (const proxy of proxies) await proxy.close()
  await deployment?.close()
})
beforeEach(() => mock.reset())

async function cutting(framesBeforeCut: number, cuts: number): Promise<CuttingProxy> {
  const proxy = await startCuttingProxy(app.url, { framesBeforeCut, cuts })
  proxies.push(proxy)
  return proxy
}

const retry = { initialDelayMs: 50, maxDelayMs: 400 }

/** Requests for the events feed sent through the proxy so far (over any connection). */
const feedRequests = (proxy: CuttingProxy) =>
  proxy.sent.join('').match(/^GET \/v1\/sessions\/[^/]+\/events\b/gm)?.length ?? 0

describe('client streams over a connection that breaks', () => {
  it('follows the events feed through torn connections and follow limits, each event once', async () => {
    const { session_id: id } = await direct.createSession()
    const proxy = await cutting(2, 4)
    const follower = new TurnlineClient({ baseUrl: proxy.url })
    const seen: SeqEvent[] = []
    const following = (async () => {
      for await (const item of follower.events(id, { follow: true, retry })) seen.push(item)
    })()

    for (let turn = 1; turn <= 3; turn++) {
      mock.enqueue({ text: `Answer number ${turn}.` })
      await direct.stepTurn(id, { input: `Question ${turn}` })
      // The follower has every event so far, then its stream ends at the server's follow limit
      // and is reopened before the next turn.
      const total = (await direct.readEvents(id)).events.length
      await vi.waitFor(() => expect(seen.length).toBe(total), { timeout: 15_000 })
      const opened = feedRequests(proxy)
      await vi.waitFor(() => expect(feedRequests(proxy)).toBeGreaterThan(opened), {
        timeout: 15_000,
      })
    }
    await direct.complete(id)
    await following

    const log = await direct.readEvents(id)
    expect(log.events.length).toBe(14)
    expect(seen.map((s) => s.seq)).toEqual(log.events.map((e) => e.seq))
    expect(seen).toEqual(log.events)
    expect(seen.at(-1)?.event.type).toBe('thread.completed')
    // The connections really were torn, and reopened (cuts + follow limits).
    expect(proxy.cutsMade).toBe(4)
    expect(proxy.connections).toBeGreaterThan(4)
    // Each reconnection asked for the events after the last one delivered.
    const resumedAfter = proxy.sent
      .flatMap((text) => [...text.matchAll(/^last-event-id: (\d+)\r$/gim)])
      .map((match) => Number(match[1]))
    expect(resumedAfter.length).toBeGreaterThanOrEqual(4)
    expect(resumedAfter).toEqual([...resumedAfter].sort((a, b) => a - b))
  })

  it('resumes a streamed turn cut mid-stream without running it twice', async () => {
    const { session_id: id } = await direct.createSession()
    const proxy = await cutting(1, 1)
    const client = new TurnlineClient({ baseUrl: proxy.url })
    // A slow model reply: the turn is still running on the server when its stream is torn.
    mock.enqueue({
      text: 'A long answer that takes a while to stream, chunk by chunk.',
      frameDelayMs: 60,
    })
    const turn = client.streamTurn(id, { input: 'Take your time' }, { retry })
    const seen: SeqEvent[] = []
    for await (const item of turn) seen.push(item)
    const result = await turn.result()

    expect(proxy.cutsMade).toBe(1)
    expect(result.status).toBe('completed')
    expect(mock.requests).toHaveLength(1)
    expect(seen).toEqual(turnEvents(result))
    expect(seen.map((s) => s.seq)).toEqual([1, 2, 3, 4])
    const log = await direct.readEvents(id, { after: 0 })
    expect(seen).toEqual(log.events)
  })

  it('continues a cut Open Responses stream from its last sequence number', async () => {
    const proxy = await cutting(3, 2)
    const client = new TurnlineClient({ baseUrl: proxy.url })
    mock.enqueue({
      text: 'An Open Responses answer, streamed slowly enough to be cut.',
      frameDelayMs: 40,
    })
    const events = []
    for await (const event of client.responses.stream({ input: 'Hello' }, { retry })) {
      events.push(event)
    }
    // Cut twice (the POST, then the first GET that resumed it), yet every number once, in order.
    expect(proxy.cutsMade).toBe(2)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events[0]?.type).toBe('response.created')
    expect(events.map((e) => e.type)).toContain('response.completed')
    expect(mock.requests).toHaveLength(1)
    const id = String((events[0] as { response?: { id?: string } }).response?.id)
    const replayed = []
    for await (const event of direct.responses.events(id)) replayed.push(event)
    expect(replayed).toEqual(events)
  })

  it('stops reconnecting after its attempts, and at once on abort', async () => {
    const { session_id: id } = await direct.createSession()
    // Every connection torn after its first frame: the same event again and again, no progress.
    const proxy = await cutting(0, 1000)
    const client = new TurnlineClient({ baseUrl: proxy.url })
    const failed = await (async () => {
      for await (const _ of client.events(id, {
        follow: true,
        retry: { ...retry, maxAttempts: 3 },
      })) {
        // nothing gets through
      }
    })().catch((error: unknown) => error)
    expect(failed).toMatchObject({ name: 'TurnlineConnectionError' })
    expect(proxy.cutsMade).toBe(4)

    const abort = new AbortController()
    const started = Date.now()
    const aborted = (async () => {
      for await (const _ of direct.events(id, { follow: true, signal: abort.signal })) {
        // thread.started, then the session idles
      }
    })().catch((error: unknown) => error)
    setTimeout(() => abort.abort(), 300)
    expect(await aborted).toMatchObject({ name: 'AbortError' })
    expect(Date.now() - started).toBeLessThan(1500)
  })
})
