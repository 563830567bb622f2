import type { HttpBindings } from '@hono/node-server'
import { type Context, Hono } from 'hono'
import {
  type BlockScript,
  blockFrames,
  errorEvent,
  type MessageUsage,
  messageEnd,
  messageStart,
  PING,
} from './anthropic-frames.ts'
import { serveApp } from './http-server.ts'
import { PromptCache, redactedData, requestViolation, signatureOf } from './mock-anthropic-rules.ts'
import { openMocks } from './open-mocks.ts'
import { eventStream, type ReplayRequest, sseFrame } from './provider-replay.ts'

/**
 * A mock of Anthropic's Messages API (`POST /v1/messages`, streamed), scripted like the mock
 * OpenAI server (mock-openai.ts): each request takes the next step of the script (or a
 * responder's). Unlike a replay, it holds requests to the API's rules (mock-anthropic-rules.ts):
 * no sampling parameters, tool results right after their tool uses, thinking blocks sent back
 * with the signature it gave them, at most four cache breakpoints — a request that breaks one is
 * answered 400 `invalid_request_error` with the API's message and fails `assertDone`. It counts
 * prompt caching as Anthropic does (cache reads and writes from the breakpoints), so usage shows
 * whether an adapter's breakpoints let the next request read the previous one's prefix.
 */
export interface MockClaudeStep {
  text?: string
  /** A thinking block first, streamed and signed (the request must have thinking on). */
  thinking?: string
  /** A redacted_thinking block first (before `thinking`). */
  redacted?: boolean
  toolCalls?: { id?: string; name: string; arguments: string }[]
  /** Default: `tool_use` with tool calls, else `end_turn`. */
  stopReason?: string
  /** Replaces counted usage fields. */
  usage?: Partial<MessageUsage>
  /** An HTTP error answer of this status, `{"type":"error","error":{type, message}}`. */
  status?: number
  /** The error's `type` (default by status: 529 overloaded_error, 429 rate_limit_error, …). */
  errorType?: string
  message?: string
  headers?: Record<string, string>
  /** An `error` event inside the 200 stream after `afterFrames` frames (default 1). */
  streamError?: { type: string; message: string; afterFrames?: number }
  /** Drop the connection after this many SSE frames. */
  disconnectAfterFrames?: number
  /** Answer only once this settles. */
  hold?: Promise<unknown>
  /** Characters per streamed delta. Default 6. */
  chunkSize?: number
}

export type MockClaudeRequest = ReplayRequest

export interface MockAnthropic {
  /** `http://127.0.0.1:<port>` (the SDK appends `/v1/messages`). */
  baseURL: string
  enqueue(...steps: MockClaudeStep[]): void
  respond(responder: ((request: MockClaudeRequest) => MockClaudeStep) | undefined): void
  readonly requests: MockClaudeRequest[]
  assertDone(): void
  reset(): void
  close(): Promise<void>
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

function errorReply(status: number, type: string, message: string, headers = {}): Response {
  const requestId = 'req_011Mock'
  return Response.json(
    { type: 'error', error: { type, message }, request_id: requestId },
    { status, headers: { 'request-id': requestId, ...headers } },
  )
}

const pieces = (text: string, size: number): string[] => {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out.length > 0 ? out : ['']
}

/** `cacheMinimumTokens`: prefixes shorter than this are not cached (the model's minimum). */
export async function startMockAnthropic(
  options: { cacheMinimumTokens?: number } = {},
): Promise<MockAnthropic> {
  const queue: MockClaudeStep[] = []
  const requests: MockClaudeRequest[] = []
  const failures: string[] = []
  const issuedRedacted = new Set<string>()
  const cache = new PromptCache(options.cacheMinimumTokens)
  let responder: ((request: MockClaudeRequest) => MockClaudeStep) | undefined
  let counter = 0
  const app = new Hono<{ Bindings: HttpBindings }>()

  async function handle(c: Context<{ Bindings: HttpBindings }>): Promise<Response> {
    const raw = await c.req.text()
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(raw) as Record<string, unknown>
    } catch {
      failures.push('mock-anthropic: a request body is not JSON')
    }
    const request = { path: c.req.path, body, headers: c.req.header() }
    requests.push(request)
    const n = requests.length
    const violation = requestViolation(body, issuedRedacted)
    if (violation) {
      failures.push(`mock-anthropic: request #${n} refused: ${violation}`)
      return errorReply(400, 'invalid_request_error', violation)
    }
    const step = queue.shift() ?? responder?.(request)
    if (!step) {
      const message = `mock-anthropic: unexpected request #${n} (the script is exhausted)`
      failures.push(message)
      return errorReply(500, 'api_error', message)
    }
    if (step.hold) await step.hold
    if (step.status !== undefined && step.status >= 400) {
      const type = step.errorType ?? ERROR_TYPES[step.status] ?? 'api_error'
      return errorReply(step.status, type, step.message ?? `mock ${type}`, step.headers)
    }
    const thinkingOn = typeof body.thinking === 'object' && body.thinking !== null
    if ((step.thinking !== undefined || step.redacted) && !thinkingOn) {
      failures.push(`mock-anthropic: request #${n} asks for no thinking, the step thinks`)
    }
    counter += 1
    const size = Math.max(1, step.chunkSize ?? 6)
    const blocks: BlockScript[] = []
    if (step.redacted) {
      const data = redactedData(`${counter}`)
      issuedRedacted.add(data)
      blocks.push({ redacted: data })
    }
    if (step.thinking !== undefined) {
      blocks.push({ thinking: pieces(step.thinking, size), signature: signatureOf(step.thinking) })
    }
    if (step.text) blocks.push({ text: pieces(step.text, size) })
    for (const [i, call] of (step.toolCalls ?? []).entries()) {
      const id = call.id ?? `toolu_mock_${counter}_${i}`
      blocks.push({ tool: { id, name: call.name, args: pieces(call.arguments, size) } })
    }
    const output = JSON.stringify(blocks)
    const usage: MessageUsage = {
      ...cache.count(body),
      output_tokens: Math.ceil(output.length / 4),
      ...step.usage,
    }
    const model = typeof body.model === 'string' ? body.model : 'claude-mock'
    const stop = step.stopReason ?? (step.toolCalls?.length ? 'tool_use' : 'end_turn')
    let frames = [
      messageStart(model, usage, `msg_mock_${counter}`),
      PING,
      ...blocks.flatMap((block, index) => blockFrames(index, block)),
      ...messageEnd(stop, usage),
    ].map(sseFrame)
    if (step.streamError) {
      const { type, message, afterFrames } = step.streamError
      frames = [...frames.slice(0, afterFrames ?? 1), sseFrame(errorEvent(type, message))]
    }
    return eventStream(frames, c.env.incoming.socket, step.disconnectAfterFrames, {
      headers: { 'request-id': `req_mock_${counter}`, ...step.headers },
    })
  }

  app.post('/v1/messages', handle)
  app.all('*', (c) => {
    const message = `mock-anthropic: unexpected ${c.req.method} ${c.req.path}`
    failures.push(message)
    return errorReply(404, 'not_found_error', message)
  })

  const server = await serveApp({
    fetch: (request: Request, env?: unknown) => app.fetch(request, env as HttpBindings),
  })
  const mock: MockAnthropic = {
    baseURL: server.url,
    enqueue: (...steps) => {
      queue.push(...steps)
    },
    respond: (fn) => {
      responder = fn
    },
    requests,
    assertDone() {
      const problems = [...failures]
      if (queue.length > 0) problems.push(`${queue.length} scripted step(s) were never requested`)
      queue.length = 0
      failures.length = 0
      if (problems.length > 0) throw new Error(problems.join('; '))
    },
    reset() {
      queue.length = 0
      requests.length = 0
      failures.length = 0
      responder = undefined
      cache.clear()
    },
    async close() {
      openMocks.delete(mock)
      await server.close()
    },
  }
  openMocks.add(mock)
  return mock
}
