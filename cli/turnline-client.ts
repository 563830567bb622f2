import type * as z from 'zod'
import { parseEventLine } from '../src/contract/serialize.ts'
import {
  CreatedSessionSchema,
  ErrorBodySchema,
  ForkedSessionSchema,
  parseFeedLine,
  parseTurnAnswer,
  type SeqEvent,
  SessionListSchema,
  type SessionSummary,
  type SessionView,
  SessionViewSchema,
  type TurnAnswer,
} from './api-answers.ts'
import { lines, sseFrames } from './sse-reader.ts'

/** A request the server refused or failed: its HTTP status and error code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message)
  }
}

/** The server could not be reached (or the connection broke). */
export class ConnectionError extends Error {}

export type Fetcher = (request: Request) => Promise<Response>
export type EventSink = (event: SeqEvent) => Promise<void> | void

/**
 * The Turnline HTTP API as the CLI uses it, over any fetch: the network (`--url`) or the
 * embedded app's own `fetch` (no port). Turns stream as SSE, so events arrive while they happen.
 */
export class TurnlineClient {
  constructor(
    private readonly fetcher: Fetcher,
    private readonly base: string,
    private readonly apiKey?: string,
  ) {}

  async createSession(body: Record<string, unknown>) {
    return this.json('POST', '/v1/sessions', CreatedSessionSchema, body)
  }

  async getSession(id: string): Promise<SessionView> {
    return this.json('GET', `/v1/sessions/${encodeURIComponent(id)}`, SessionViewSchema)
  }

  async listSessions(query: Record<string, string>): Promise<{
    sessions: SessionSummary[]
    cursor?: string
  }> {
    const search = new URLSearchParams(query).toString()
    return this.json('GET', `/v1/sessions${search ? `?${search}` : ''}`, SessionListSchema)
  }

  async fork(id: string) {
    return this.json('POST', `/v1/sessions/${encodeURIComponent(id)}/fork`, ForkedSessionSchema, {})
  }

  /** `POST …/turns` streamed: each event goes to `sink` as it happens; answers the result. */
  stepTurn(
    id: string,
    body: { input?: string },
    idempotencyKey: string,
    sink: EventSink,
  ): Promise<TurnAnswer> {
    return this.streamedTurn(`/v1/sessions/${encodeURIComponent(id)}/turns`, body, sink, {
      'idempotency-key': idempotencyKey,
    })
  }

  complete(id: string, sink: EventSink): Promise<TurnAnswer> {
    return this.streamedTurn(`/v1/sessions/${encodeURIComponent(id)}/complete`, {}, sink)
  }

  cancel(id: string, sink: EventSink): Promise<TurnAnswer> {
    return this.streamedTurn(`/v1/sessions/${encodeURIComponent(id)}/cancel`, {}, sink)
  }

  /** One page of the events feed after `after` (NDJSON). */
  async readEvents(id: string, after: number, limit = 1000): Promise<SeqEvent[]> {
    const response = await this.send(
      'GET',
      `/v1/sessions/${encodeURIComponent(id)}/events?after=${after}&limit=${limit}`,
    )
    const events: SeqEvent[] = []
    if (!response.body) return events
    for await (const line of lines(response.body)) {
      if (line.trim() !== '') events.push(parseFeedLine(line))
    }
    return events
  }

  /**
   * The followed events feed (SSE, with keep-alives) after `after`, until the server ends it:
   * at `thread.completed`, after its follow limit, or when `signal` aborts.
   */
  async followEvents(id: string, after: number, sink: EventSink, signal?: AbortSignal) {
    const response = await this.send(
      'GET',
      `/v1/sessions/${encodeURIComponent(id)}/events?after=${after}&follow=1`,
      undefined,
      { accept: 'text/event-stream' },
      signal,
    )
    if (!response.body) return
    for await (const frame of sseFrames(response.body)) {
      if (frame.event === 'error') throw apiErrorOf(500, frame.data)
      if (frame.id === undefined) continue
      await sink({ seq: Number(frame.id), event: parseEventLine(frame.data) })
    }
  }

  private async streamedTurn(
    path: string,
    body: Record<string, unknown>,
    sink: EventSink,
    headers: Record<string, string> = {},
  ): Promise<TurnAnswer> {
    const response = await this.send('POST', path, body, {
      accept: 'text/event-stream',
      ...headers,
    })
    const type = response.headers.get('content-type') ?? ''
    if (!type.startsWith('text/event-stream') || !response.body) {
      return parseTurnAnswer(await response.json())
    }
    for await (const frame of sseFrames(response.body)) {
      if (frame.event === 'turn.result') return parseTurnAnswer(JSON.parse(frame.data))
      if (frame.event === 'error') throw apiErrorOf(500, frame.data)
      if (frame.id !== undefined) {
        await sink({ seq: Number(frame.id), event: parseEventLine(frame.data) })
      }
    }
    throw new ConnectionError('the turn stream ended without its result')
  }

  private async json<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    body?: Record<string, unknown>,
  ): Promise<z.output<S>> {
    const response = await this.send(method, path, body)
    return schema.parse(await response.json())
  }

  /** Sends a request; a non-2xx answer becomes an ApiError, a network fault a ConnectionError. */
  private async send(
    method: string,
    path: string,
    body?: Record<string, unknown>,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<Response> {
    const request = new Request(`${this.base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    })
    let response: Response
    try {
      response = await this.fetcher(request)
    } catch (error) {
      if (signal?.aborted) throw error
      throw new ConnectionError(`cannot reach ${this.base}: ${causeOf(error)}`)
    }
    if (response.ok) return response
    const header = response.headers.get('retry-after')
    const retry = header === null ? Number.NaN : Number(header)
    throw apiErrorOf(
      response.status,
      await response.text(),
      Number.isFinite(retry) ? retry : undefined,
    )
  }
}

function apiErrorOf(status: number, text: string, retryAfterSeconds?: number): ApiError {
  try {
    const body = ErrorBodySchema.parse(JSON.parse(text))
    return new ApiError(status, body.error.code, body.error.message, retryAfterSeconds)
  } catch {
    return new ApiError(status, 'internal', `HTTP ${status}: ${text.slice(0, 300)}`)
  }
}

function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as Error & { cause?: unknown }).cause
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message
}
