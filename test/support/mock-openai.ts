import type { AddressInfo } from 'node:net'
import { type HttpBindings, serve } from '@hono/node-server'
import { type Context, Hono } from 'hono'
import { cutConnection } from './cut-connection.ts'
import { compactedResponse, type MockCompaction } from './mock-openai-compact.ts'
import {
  chatCompletion,
  chatFrames,
  type MockToolCall,
  type MockUsage,
  type ReplyContent,
  responseObject,
  responsesFrames,
} from './mock-openai-frames.ts'
import { errorReply, toolChoiceViolation } from './mock-openai-rules.ts'
import { openMocks } from './open-mocks.ts'

export type { MockCompaction } from './mock-openai-compact.ts'
export type { MockToolCall, MockUsage } from './mock-openai-frames.ts'

/** `compact` is `POST /v1/responses/compact`, answered only by steps meant for it. */
export type MockApi = 'chat' | 'responses' | 'compact'

/** One scripted reply. Without `status` it is a success; with it, an OpenAI-shaped error. */
export interface MockStep {
  /** When set, the request must arrive on this API or it counts as unexpected. */
  api?: MockApi
  /** A `responses/compact` answer; a compact request takes only a step with this or api 'compact'. */
  compaction?: MockCompaction
  text?: string
  /** Streamed as reasoning summary (responses) or `reasoning_content` (chat, vLLM style). */
  reasoning?: string
  toolCalls?: MockToolCall[]
  /** Omitted: estimated from lengths. null: no usage at all (servers that ignore it). */
  usage?: MockUsage | null
  /** Chat finish_reason; on responses 'length'/'content_filter' make the response incomplete. */
  finishReason?: string
  status?: number
  /** Error code, e.g. 'context_length_exceeded', 'rate_limit_exceeded', 'invalid_api_key'. */
  code?: string
  message?: string
  headers?: Record<string, string>
  /** Wait before replying. */
  delayMs?: number
  /** Reply only once this settles (the test decides when: see gate.ts). */
  hold?: Promise<unknown>
  /** Wait between SSE frames. */
  frameDelayMs?: number
  /** Characters per streamed text/argument delta. Default 4. */
  chunkSize?: number
  /** Drop the connection before any reply (a network fault). */
  disconnect?: boolean
  /** Drop the connection after this many SSE frames. */
  disconnectAfterFrames?: number
  /**
   * A provider error inside a 200 stream, after `afterFrames` frames (default 1): chat sends
   * `data: {"error":…}`, responses sends `response.failed` (or a bare `error` event).
   */
  streamError?: { code: string; message: string; afterFrames?: number; event?: 'error' }
}

export interface MockRequest {
  api: MockApi
  path: string
  stream: boolean
  body: Record<string, unknown>
  headers: Record<string, string>
}

export type MockResponder = (request: MockRequest) => MockStep | Promise<MockStep>

export interface MockOpenAI {
  /** `http://127.0.0.1:<port>/v1`, ready for the SDK's `baseURL`. */
  baseURL: string
  enqueue(...steps: MockStep[]): void
  /** Computes replies once the queue is empty (unlimited turns); undefined switches it off. */
  respond(responder: MockResponder | undefined): void
  /** Every request received, in order, including unexpected ones. */
  readonly requests: MockRequest[]
  /**
   * Throws when a request was unexpected or scripted steps are left over; what it reported is
   * then forgotten. Called after every test for every open mock (`assertMocksDone`).
   */
  assertDone(): void
  /** Forgets the script, the responder, the recorded requests and failures (between tests). */
  reset(): void
  close(): Promise<void>
}

function withStreamError(
  api: MockApi,
  frames: string[],
  reply: ReplyContent,
  failure: NonNullable<MockStep['streamError']>,
): string[] {
  const kept = frames.slice(0, failure.afterFrames ?? 1)
  const error = { code: failure.code, message: failure.message }
  if (api === 'chat') {
    const body = { error: { ...error, type: 'server_error', param: null } }
    return [...kept, `data: ${JSON.stringify(body)}\n\n`]
  }
  const sequence_number = kept.length
  const payload =
    failure.event === 'error'
      ? { type: 'error', sequence_number, ...error, param: null }
      : {
          type: 'response.failed',
          sequence_number,
          response: { ...responseObject(reply, 'in_progress'), status: 'failed', error },
        }
  return [...kept, `event: ${payload.type}\ndata: ${JSON.stringify(payload)}\n\n`]
}

const estimateTokens = (text: string) => Math.ceil(text.length / 4)
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export async function startMockOpenAI(): Promise<MockOpenAI> {
  const queue: MockStep[] = []
  const requests: MockRequest[] = []
  const failures: string[] = []
  let responder: MockResponder | undefined
  let counter = 0

  type Env = { Bindings: HttpBindings }
  const app = new Hono<Env>()

  async function handle(api: MockApi, c: Context<Env>): Promise<Response> {
    const raw = await c.req.text()
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(raw) as Record<string, unknown>
    } catch {
      failures.push(`request body on ${c.req.path} is not JSON`)
    }
    const request: MockRequest = {
      api,
      path: c.req.path,
      stream: body.stream === true,
      body,
      headers: c.req.header(),
    }
    requests.push(request)
    const n = requests.length
    const refused = toolChoiceViolation(api, body)
    if (refused) failures.push(`mock-openai: request #${n} to ${c.req.path} refused: ${refused}`)
    if (refused) return errorReply({ message: refused, code: 'invalid_value' }, 400)
    let step = queue.shift()
    if (!step && responder) step = await responder(request)
    const forCompact = step?.api === 'compact' || step?.compaction !== undefined
    if (
      !step ||
      (step.api !== undefined && step.api !== api) ||
      forCompact !== (api === 'compact')
    ) {
      const why = !step
        ? 'the script is exhausted'
        : `expected the ${step.api ?? (forCompact ? 'compact' : 'chat or responses')} API`
      const message = `mock-openai: unexpected request #${n} to ${c.req.path} (${why})`
      failures.push(message)
      return errorReply({ message, code: 'mock_unexpected_request' }, 500)
    }
    if (step.delayMs) await delay(step.delayMs)
    if (step.hold) await step.hold
    if (step.disconnect) {
      c.env.incoming.socket.destroy()
      return new Response(null, { status: 599 })
    }
    if (step.status !== undefined && step.status >= 400) return errorReply(step, step.status)

    counter += 1
    const toolCalls = (step.toolCalls ?? []).map((call, i) => ({
      ...call,
      id: call.id ?? `call_mock_${counter}_${i}`,
    }))
    if (api === 'compact') {
      const usage =
        step.usage === undefined
          ? { input_tokens: estimateTokens(raw), output_tokens: 40 }
          : step.usage
      const payload = compactedResponse(step.compaction ?? {}, body, counter, usage)
      return Response.json(payload, {
        headers: { 'x-request-id': `req_mock_${counter}`, ...step.headers },
      })
    }
    const text = step.text ?? ''
    const output =
      text + (step.reasoning ?? '') + toolCalls.map((t) => t.name + t.arguments).join('')
    const streamOptions = body.stream_options as { include_usage?: unknown } | undefined
    const reply: ReplyContent = {
      id: `mock${counter}`,
      model: typeof body.model === 'string' ? body.model : 'mock-model',
      created: Math.floor(Date.now() / 1000),
      text,
      reasoning: step.reasoning ?? '',
      toolCalls,
      usage:
        step.usage === undefined
          ? { input_tokens: estimateTokens(raw), output_tokens: estimateTokens(output) }
          : step.usage,
      finishReason: step.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      chunkSize: Math.max(1, step.chunkSize ?? 4),
      includeUsage: api === 'responses' || streamOptions?.include_usage === true,
    }
    const headers = { 'x-request-id': `req_mock_${counter}`, ...step.headers }
    if (!request.stream) {
      const payload = api === 'chat' ? chatCompletion(reply) : responseObject(reply)
      return Response.json(payload, { status: step.status ?? 200, headers })
    }
    let frames = api === 'chat' ? chatFrames(reply) : responsesFrames(reply)
    if (step.streamError) frames = withStreamError(api, frames, reply, step.streamError)
    const encoder = new TextEncoder()
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === step.disconnectAfterFrames) {
          await cutConnection(c.env.incoming.socket)
          controller.close()
          return
        }
        const frame = frames[sent]
        if (frame === undefined) {
          controller.close()
          return
        }
        if (step.frameDelayMs && sent > 0) await delay(step.frameDelayMs)
        sent += 1
        controller.enqueue(encoder.encode(frame))
      },
    })
    return new Response(stream, {
      status: step.status ?? 200,
      headers: {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        ...headers,
      },
    })
  }

  app.post('/v1/chat/completions', (c) => handle('chat', c))
  app.post('/v1/responses', (c) => handle('responses', c))
  app.post('/v1/responses/compact', (c) => handle('compact', c))
  app.all('*', (c) => {
    const message = `mock-openai: unexpected ${c.req.method} ${c.req.path}`
    failures.push(message)
    return errorReply({ message, code: 'mock_unexpected_request' }, 404)
  })

  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
      resolve(started),
    )
  })
  const { port } = server.address() as AddressInfo

  const mock: MockOpenAI = {
    baseURL: `http://127.0.0.1:${port}/v1`,
    enqueue: (...steps) => {
      queue.push(...steps)
    },
    respond: (fn) => {
      responder = fn
    },
    requests,
    assertDone: () => {
      const problems = [...failures]
      if (queue.length > 0) problems.push(`${queue.length} scripted step(s) were never requested`)
      queue.length = 0
      failures.length = 0
      if (problems.length > 0) throw new Error(`mock-openai: ${problems.join('; ')}`)
    },
    reset: () => {
      queue.length = 0
      requests.length = 0
      failures.length = 0
      responder = undefined
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        openMocks.delete(mock)
        if ('closeAllConnections' in server) server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
  openMocks.add(mock)
  return mock
}
