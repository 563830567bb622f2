import { IntentResponseSchema, TurnResponseSchema } from '../src/contract/wire-responses.ts'
import type {
  CallOptions,
  CompactRequest,
  IdempotentCallOptions,
  PermissionRequest,
  PlanApprovalRequest,
  TurnCallOptions,
  TurnRequest,
} from './requests.ts'
import { SessionCalls, sessionPath as session } from './session-calls.ts'
import { drain, keyedPost, newIdempotencyKey, TurnStream } from './turn-stream.ts'
import type { IntentAccepted, TurnResponse } from './types.ts'

/**
 * What steps a session: turns (plain or streamed and resumable), their endings, compaction,
 * steering, and the answers a stopped turn waits for.
 */
export class TurnCalls extends SessionCalls {
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

  private endSession(id: string, path: string, options: TurnCallOptions): Promise<TurnResponse> {
    const call = { path: session(id, path), body: {}, signal: options.signal }
    if (!options.onEvent) return this.transport.json('POST', call.path, TurnResponseSchema, call)
    return drain(new TurnStream(this.transport, { ...call, retry: options.retry }), options.onEvent)
  }
}
