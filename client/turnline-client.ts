import { UsageReportSchema } from '../src/contract/tenancy.ts'
import type { ParsedThreadEvent } from '../src/contract/thread-event.ts'
import {
  HandoffResponseSchema,
  HealthResponseSchema,
  OrientationViewSchema,
  VerifyResponseSchema,
} from '../src/contract/wire-responses.ts'
import { ArtifactsClient, LoopsClient } from './agent-layer-client.ts'
import { type EventPage, type EventsOptions, eventFeed, readEventPage } from './event-feed.ts'
import { execEvents } from './exec-stream.ts'
import { OutputArtifactsClient } from './output-artifacts-client.ts'
import type {
  CallOptions,
  ExecRequest,
  HandoffRouteRequest,
  IdempotentCallOptions,
  TurnlineClientOptions,
  VerifyRequest,
} from './requests.ts'
import { ResponsesClient } from './responses-client.ts'
import { retryPolicy } from './retry.ts'
import { sessionPath as session } from './session-calls.ts'
import { Transport } from './transport.ts'
import { TurnCalls } from './turn-calls.ts'
import { keyedPost, newIdempotencyKey } from './turn-stream.ts'
import type {
  HandoffResponse,
  OrientationView,
  SeqEvent,
  UsageReport,
  VerifyResponse,
} from './types.ts'

/**
 * The Turnline HTTP API (v1), one method per route, every answer validated with the contract's
 * zod schemas: sessions (session-calls.ts) and turns (turn-calls.ts) in its bases, the rest
 * here. Web-standard globals only: runs in browsers, Deno, Workers and Node. Failures are
 * TurnlineApiError (the server's status and code), TurnlineConnectionError (unreachable, or the
 * connection broke) and TurnlineProtocolError (an answer outside the contract).
 */
export class TurnlineClient extends TurnCalls {
  /** The workspace's durable artifacts (`/v1/workspaces/:workspace/artifacts`). */
  readonly artifacts: ArtifactsClient
  /** Loop runs (`/v1/loops`). */
  readonly loops: LoopsClient
  /** The Open Responses-compatible endpoint (`/v1/responses`). */
  readonly responses: ResponsesClient
  /** Tool outputs sessions kept whole (`/v1/sessions/:id/artifacts/:artifact_id`). */
  readonly outputs: OutputArtifactsClient

  constructor(options: TurnlineClientOptions) {
    super(new Transport(options))
    this.artifacts = new ArtifactsClient(this.transport)
    this.loops = new LoopsClient(this.transport)
    this.responses = new ResponsesClient(this.transport)
    this.outputs = new OutputArtifactsClient(this.transport)
  }

  /**
   * `GET …/events` (NDJSON): one page of events with seq > `after`. The server sends a page at
   * once: one that sends nothing for `idleTimeoutMs` (default 60 s), its head included, fails
   * with a TurnlineConnectionError. A page of more events than `limit` (default: at most 5000)
   * fails with a TurnlineProtocolError, one past `maxBytes` (default: the client's
   * `maxAnswerBytes`) with a TurnlineAnswerTooLargeError.
   */
  readEvents(
    id: string,
    query: { after?: number; limit?: number } = {},
    options: CallOptions & { idleTimeoutMs?: number; maxBytes?: number } = {},
  ): Promise<EventPage> {
    const idleMs = options.idleTimeoutMs ?? retryPolicy().idleTimeoutMs
    const { signal, maxBytes } = options
    return readEventPage(this.transport, id, { ...query, signal, idleMs, maxBytes })
  }

  /**
   * The session's events, each once and in seq order; with `follow` live until `thread.completed`,
   * reconnecting with `Last-Event-ID` when the connection drops.
   */
  events(id: string, options: EventsOptions = {}): AsyncIterable<SeqEvent> {
    return eventFeed(this.transport, id, options)
  }

  /** `GET …/orientation`: the frozen `[Orientation Context]` (with `preview`, a fresh one). */
  getOrientation(
    id: string,
    query: { preview?: boolean } = {},
    options: CallOptions = {},
  ): Promise<OrientationView> {
    return this.transport.json('GET', session(id, '/orientation'), OrientationViewSchema, {
      query: query.preview ? { preview: 1 } : {},
      signal: options.signal,
    })
  }

  /** `POST …/handoff`: the session's HandoffRequest; optionally starts the next session. */
  handoff(
    id: string,
    request: HandoffRouteRequest = {},
    options: IdempotentCallOptions = {},
  ): Promise<HandoffResponse> {
    return keyedPost(
      this.transport,
      session(id, '/handoff'),
      HandoffResponseSchema,
      request,
      options,
    )
  }

  /** `POST …/verify`: a read-only verifier judges a proposed change. */
  verify(
    id: string,
    request: VerifyRequest = {},
    options: CallOptions = {},
  ): Promise<VerifyResponse> {
    return this.transport.json('POST', session(id, '/verify'), VerifyResponseSchema, {
      body: request,
      signal: options.signal,
    })
  }

  /**
   * `POST /v1/exec`: create, one turn, complete — the bare events as they happen. Sent with an
   * Idempotency-Key (the caller's or a new one, carried by its errors): sending the same request
   * with it again never runs it twice. A server that sends keep-alives and then nothing for
   * `idleTimeoutMs` (default 60 s) fails it as a dropped connection.
   */
  exec(
    request: ExecRequest,
    options: IdempotentCallOptions & { idleTimeoutMs?: number } = {},
  ): AsyncIterable<ParsedThreadEvent> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey()
    const idleMs = options.idleTimeoutMs ?? retryPolicy().idleTimeoutMs
    return execEvents(this.transport, request, { signal: options.signal, idempotencyKey, idleMs })
  }

  /** `GET /v1/usage`: the calling tenant's usage today (UTC) against its limits. */
  usage(options: CallOptions = {}): Promise<UsageReport> {
    return this.transport.json('GET', '/v1/usage', UsageReportSchema, options)
  }

  /** `GET /healthz`. */
  health(options: CallOptions = {}): Promise<{ status: 'ok' }> {
    return this.transport.json('GET', '/healthz', HealthResponseSchema, options)
  }
}
