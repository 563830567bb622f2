import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, beforeEach } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { importLambdaBundle } from './lambda-bundle.ts'
import {
  invokeStreaming,
  isStreamingHandler,
  type StreamingHandler,
  urlEvent,
} from './lambda-runtime.ts'
import type { MockOpenAI, MockStep } from './mock-openai.ts'
import { signMessage } from './signed-callback.ts'
import { startTestBackends, type TestBackends } from './test-deployment.ts'

const KEY = 'lambda-deadline-key-0123456789'
/** The secret of the deployment's `triage` webhook (tenant-d). */
const HOOK_SECRET = `whsec_${Buffer.from('lambda-deadline-webhook-secret-0123').toString('base64')}`

export type StoredEvent = { type: string; item?: { type: string } }

/**
 * The Lambda bundle's `index.handler` (S3 on moto, Upstash, no work queue, a daily token quota
 * for tenant-d and a `triage` webhook), invoked with a
 * context whose `getRemainingTimeInMillis()` the test plays (`left`): the hooks of a test file
 * about runs in the request and the function's timeout. `left` is 300 s before each test.
 */
export function lambdaDeadline(
  label: string,
  /** More settings, read once the backends are up (a runner the test starts: its URL). */
  more: () => Promise<Record<string, string>> = async () => ({}),
) {
  let out = ''
  let backends: TestBackends | undefined
  let handler: StreamingHandler | undefined
  const clock = { left: 300_000 }

  beforeAll(async () => {
    backends = await startTestBackends(label)
    const loaded = await importLambdaBundle(
      backends.env({
        TURNLINE_API_KEYS: `${KEY}=tenant-d`,
        TURNLINE_WEBHOOKS: JSON.stringify({ triage: { secret: HOOK_SECRET, tenant: 'tenant-d' } }),
        // A daily quota, so model calls hold their estimate and settle (GET /v1/usage).
        TURNLINE_LIMIT_TOKENS_PER_DAY: '1000000000',
        // HTTP tools on this machine (the test's own receiver, any port).
        TURNLINE_TOOL_ALLOWED_HOSTS: '127.0.0.1',
        ...(await more()),
      }),
    )
    out = loaded.out
    if (!isStreamingHandler(loaded.module.handler))
      throw new Error('index.handler is not streaming')
    handler = loaded.module.handler
  }, 180_000)

  afterAll(async () => {
    await backends?.close()
    if (out) await rm(out, { recursive: true, force: true })
  })

  beforeEach(() => {
    clock.left = 300_000
    mock().reset()
  })

  const mock = (): MockOpenAI => {
    if (!backends) throw new Error('the backends are not started (beforeAll)')
    return backends.mock
  }

  async function invoke(method: string, path: string, body: unknown, headers: object) {
    if (!handler) throw new Error('the bundle is not loaded (beforeAll)')
    const event = urlEvent(method, path, headers as Record<string, string>, body)
    const answer = await invokeStreaming(handler, event, () => clock.left)
    return { status: answer.prelude.statusCode, text: answer.body, endedAt: answer.endedAt }
  }

  /** The model's answers in order; `onAsked` runs as each request arrives (the clock moves). */
  function model(...steps: { step: MockStep; onAsked?: () => void }[]) {
    let next = 0
    mock().respond(() => {
      const answer = steps[next++]
      if (!answer) throw new Error('the model was asked once too often')
      answer.onAsked?.()
      return answer.step
    })
  }

  const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
  const call = (method: string, path: string, body?: unknown, headers = {}) =>
    invoke(method, path, body, { ...auth, ...headers })

  return {
    clock,
    mock,
    call,
    /** The keys the deployment's bucket holds that contain `part`. */
    async storedKeys(part: string): Promise<string[]> {
      if (!backends) throw new Error('the backends are not started (beforeAll)')
      const { objects } = await listAll(backends.bucket.store(), '')
      return objects.map(({ key }) => key).filter((key) => key.includes(part))
    },
    /** The bearer key of the deployment's tenant (tenant-d). */
    key: KEY,
    /**
     * A `fetch` that invokes the handler with the request (a client's, such as the `openai`
     * package's), answering what the function URL would.
     */
    async fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
      if (!handler) throw new Error('the bundle is not loaded (beforeAll)')
      const request = new Request(input, init)
      const url = new URL(request.url)
      const text = request.method === 'GET' ? '' : await request.text()
      const event = urlEvent(
        request.method,
        `${url.pathname}${url.search}`,
        Object.fromEntries(request.headers),
        text ? JSON.parse(text) : undefined,
      )
      const answer = await invokeStreaming(handler, event, () => clock.left)
      const { statusCode, headers } = answer.prelude
      return new Response(answer.body, { status: statusCode, headers })
    },
    /** A delivery of the `triage` webhook: the same webhook-id, signed now at each send. */
    delivery(payload: string) {
      const id = `msg_${crypto.randomUUID()}`
      return () => {
        const signed = signMessage(HOOK_SECRET, payload, id)
        return invoke('POST', '/v1/webhooks/triage', JSON.parse(signed.body), signed.headers)
      }
    },
    async newSession(): Promise<string> {
      const created = await call('POST', '/v1/sessions', {})
      return (JSON.parse(created.text) as { session_id: string }).session_id
    },
    model,
    /** The model asks for a tool (30 s are left once it has answered: the turn pauses), then ends. */
    slowRound() {
      model(
        {
          step: { toolCalls: [{ id: 'c1', name: 'no_such_tool', arguments: '{}' }] },
          onAsked: () => {
            clock.left = 30_000
          },
        },
        { step: { text: 'Done.' } },
      )
    },
    /** The session's committed events (the NDJSON feed: `{seq, schema_version, event}` a line). */
    async storedEvents(id: string): Promise<StoredEvent[]> {
      const events = await call('GET', `/v1/sessions/${id}/events`)
      return events.text
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { event: StoredEvent }).event)
    },
  }
}
