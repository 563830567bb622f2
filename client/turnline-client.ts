import { UsageReportSchema } from '../src/contract/tenancy.ts'
import type { ParsedThreadEvent } from '../src/contract/thread-event.ts'
import {
  CreateSessionResponseSchema,
  ForkResponseSchema,
  HandoffResponseSchema,
  HealthResponseSchema,
  IntentResponseSchema,
  OrientationViewSchema,
  SessionListSchema,
  SessionViewSchema,
  TurnResponseSchema,
  VerifyResponseSchema,
  WorkspaceListSchema,
} from '../src/contract/wire-responses.ts'
import { ArtifactsClient, LoopsClient } from './agent-layer-client.ts'
import { type EventPage, type EventsOptions, eventFeed, readEventPage } from './event-feed.ts'
import { execEvents } from './exec-stream.ts'
import { OutputArtifactsClient } from './output-artifacts-client.ts'
import type {
  CallOptions,
  CompactRequest,
  ExecRequest,
  ForkRequest,
  HandoffRouteRequest,
  IdempotentCallOptions,
  ListSessionsQuery,
  PermissionRequest,
  PlanApprovalRequest,
  SessionConfigInput,
  TurnCallOptions,
  TurnlineClientOptions,
  TurnRequest,
  VerifyRequest,
} from './requests.ts'
import { ResponsesClient } from './responses-client.ts'
import { Transport } from './transport.ts'
import { drain, keyedPost, newIdempotencyKey, TurnStream } from './turn-stream.ts'
import type {
  CreatedSession,
  ForkedSession,
  HandoffResponse,
  IntentAccepted,
  OrientationView,
  SeqEvent,
  SessionList,
  SessionSummary,
  SessionView,
  TurnResponse,
  UsageReport,
  VerifyResponse,
  WorkspaceList,
} from './types.ts'

const session = (id: string, rest = '') => `/v1/sessions/${encodeURIComponent(id)}${rest}`

/**
 * The Turnline HTTP API (v1), one method per route, every answer validated with the contract's
 * zod schemas. Web-standard globals only: runs in browsers, Deno, Workers and Node. Failures are
 * TurnlineApiError (the server's status and code), TurnlineConnectionError (unreachable, or the
 * connection broke) and TurnlineProtocolError (an answer outside the contract).
 */
export class TurnlineClient {
  readonly transport: Transport
  /** The workspace's durable artifacts (`/v1/workspaces/:workspace/artifacts`). */
  readonly artifacts: ArtifactsClient
  /** Loop runs (`/v1/loops`). */
  readonly loops: LoopsClient
  /** The Open Responses-compatible endpoint (`/v1/responses`). */
  readonly responses: ResponsesClient
  /** Tool outputs sessions kept whole (`/v1/sessions/:id/artifacts/:artifact_id`). */
  readonly outputs: OutputArtifactsClient

  constructor(options: TurnlineClientOptions) {
    this.transport = new Transport(options)
    this.artifacts = new ArtifactsClient(this.transport)
    this.loops = new LoopsClient(this.transport)
    this.responses = new ResponsesClient(this.transport)
    this.outputs = new OutputArtifactsClient(this.transport)
  }

  /** `POST /v1/sessions`: a new session (its `thread.started` is committed). */
  createSession(
    config: SessionConfigInput = {},
    options: CallOptions = {},
  ): Promise<CreatedSession> {
    return this.transport.json('POST', '/v1/sessions', CreateSessionResponseSchema, {
      body: config,
      signal: options.signal,
    })
  }

  /** `GET /v1/sessions/:id`: summary, usage, settings and budget. */
  getSession(id: string, options: CallOptions = {}): Promise<SessionView> {
    return this.transport.json('GET', session(id), SessionViewSchema, options)
  }

  /** `GET /v1/sessions`: one page of a workspace's sessions, newest first unless `order: 'oldest'`. */
  listSessions(query: ListSessionsQuery = {}, options: CallOptions = {}): Promise<SessionList> {
    return this.transport.json('GET', '/v1/sessions', SessionListSchema, {
      query: { ...query },
      signal: options.signal,
    })
  }

  /** `GET /v1/workspaces`: the tenant's workspaces with their numbers of sessions. */
  listWorkspaces(options: CallOptions = {}): Promise<WorkspaceList> {
    return this.transport.json('GET', '/v1/workspaces', WorkspaceListSchema, options)
  }

  /** Every session of a workspace, page after page. */
  async *sessions(
    query: Omit<ListSessionsQuery, 'cursor'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<SessionSummary, void, undefined> {
    let cursor: string | undefined
    do {
      const page = await this.listSessions({ ...query, ...(cursor ? { cursor } : {}) }, options)
      yield* page.sessions
      cursor = page.cursor
    } while (cursor)
  }

  /**
   * `POST /v1/sessions/:id/turns`: steps one turn. With `onEvent` the turn streams (SSE) and
   * survives a dropped connection (see {@link streamTurn}). The Idempotency-Key is the caller's
   * or a new one, carried by every error, so a retry with it never runs the turn twice.
   */
  async stepTurn(
    id: string,
    request: TurnRequest = {},
    options: TurnCallOptions & IdempotentCallOptions = {},
  ): Promise<TurnResponse> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey()
    if (options.onEvent) {
      return drain(this.streamTurn(id, request, { ...options, idempotencyKey }), options.onEvent)
    }
    const path = session(id, '/turns')
    return keyedPost(this.transport, path, TurnResponseSchema, request, {
      ...options,
      idempotencyKey,
    })
  }

  /**
   * `POST /v1/sessions/:id/turns` streamed: iterate the events as they happen (each once, in
   * seq order), then `await stream.result()`. A dropped connection is resumed by sending the
   * request again with the same Idempotency-Key (never a second run).
   */
  streamTurn(
    id: string,
    request: TurnRequest = {},
    options: Omit<TurnCallOptions, 'onEvent'> & IdempotentCallOptions = {},
  ): TurnStream {
    return new TurnStream(this.transport, {
      path: session(id, '/turns'),
      body: request,
      idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(),
      signal: options.signal,
      retry: options.retry,
    })
  }

  /** `POST …/complete`: ends the session with success (or the failure of its last turn). */
  complete(id: string, options: TurnCallOptions = {}): Promise<TurnResponse> {
    return this.endSession(id, '/complete', options)
  }

  /** `POST …/cancel`: ends the session `cancelled`; a running turn stops at its next event. */
  cancel(id: string, options: TurnCallOptions = {}): Promise<TurnResponse> {
    return this.endSession(id, '/cancel', options)
  }

  /** `POST …/compact`: a manual compaction (Idempotency-Key: the caller's or a new one). */
  compact(
    id: string,
    request: CompactRequest = {},
    options: IdempotentCallOptions = {},
  ): Promise<TurnResponse> {
    return keyedPost(this.transport, session(id, '/compact'), TurnResponseSchema, request, options)
  }

  /** `POST …/intents`: a steering follow-up for the next turn boundary (also mid-turn). */
  steer(id: string, text: string, options: CallOptions = {}): Promise<IntentAccepted> {
    return this.transport.json('POST', session(id, '/intents'), IntentResponseSchema, {
      body: { text },
      signal: options.signal,
    })
  }

  /** `POST …/permissions`: answers the tool call a turn stopped for (`awaiting_approval`). */
  resolvePermission(
    id: string,
    request: PermissionRequest,
    options: CallOptions = {},
  ): Promise<TurnResponse> {
    return this.transport.json('POST', session(id, '/permissions'), TurnResponseSchema, {
      body: request,
      signal: options.signal,
    })
  }

  /** `POST …/plan-approval`: answers a waiting plan (executing decisions run the build turn). */
  approvePlan(
    id: string,
    request: PlanApprovalRequest,
    options: CallOptions = {},
  ): Promise<TurnResponse> {
    return this.transport.json('POST', session(id, '/plan-approval'), TurnResponseSchema, {
      body: request,
      signal: options.signal,
    })
  }

  /** `POST …/fork`: a new session seeded with this one's summarized history. */
  fork(id: string, request: ForkRequest = {}, options: CallOptions = {}): Promise<ForkedSession> {
    return this.transport.json('POST', session(id, '/fork'), ForkResponseSchema, {
      body: request,
      signal: options.signal,
    })
  }

  /** `GET …/events` (NDJSON): one page of events with seq > `after`. */
  readEvents(
    id: string,
    query: { after?: number; limit?: number } = {},
    options: CallOptions = {},
  ): Promise<EventPage> {
    return readEventPage(this.transport, id, { ...query, ...options })
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

  /** `POST /v1/exec`: create, one turn, complete — the bare events as they happen. */
  exec(request: ExecRequest, options: CallOptions = {}): AsyncIterable<ParsedThreadEvent> {
    return execEvents(this.transport, request, options.signal)
  }

  /** `GET /v1/usage`: the calling tenant's usage today (UTC) against its limits. */
  usage(options: CallOptions = {}): Promise<UsageReport> {
    return this.transport.json('GET', '/v1/usage', UsageReportSchema, options)
  }

  /** `GET /healthz`. */
  health(options: CallOptions = {}): Promise<{ status: 'ok' }> {
    return this.transport.json('GET', '/healthz', HealthResponseSchema, options)
  }

  private endSession(id: string, path: string, options: TurnCallOptions): Promise<TurnResponse> {
    const call = { path: session(id, path), body: {}, signal: options.signal }
    if (!options.onEvent) return this.transport.json('POST', call.path, TurnResponseSchema, call)
    return drain(new TurnStream(this.transport, { ...call, retry: options.retry }), options.onEvent)
  }
}
