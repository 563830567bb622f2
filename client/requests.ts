import type * as z from 'zod'
import type { IntentRequestSchema, TurnRequestSchema } from '../src/contract/api.ts'
import type { DocumentBodySchema } from '../src/contract/artifacts.ts'
import type { CompactRequestSchema } from '../src/contract/compact-request.ts'
import type { HandoffRequestSchema } from '../src/contract/handoff.ts'
import type { HandoffRouteRequestSchema } from '../src/contract/handoff-request.ts'
import type { LoopCreateRequestSchema, LoopStepRequestSchema } from '../src/contract/loop-state.ts'
import type { ResponsesRequestSchema } from '../src/contract/open-responses-request.ts'
import type { PermissionResolutionRequestSchema } from '../src/contract/permission-resolution.ts'
import type { PlanApprovalRequestSchema } from '../src/contract/plan-approval.ts'
import type { ProgressUpdateSchema } from '../src/contract/progress-ledger.ts'
import type { ExecRequestSchema, ForkRequestSchema } from '../src/contract/route-bodies.ts'
import type { SessionConfigSchema } from '../src/contract/session-config.ts'
import type { VerifyRequestSchema } from '../src/contract/verification.ts'
import type { RetryOptions } from './retry.ts'
import type { FetchLike } from './transport.ts'
import type { SeqEvent } from './types.ts'

/**
 * Request bodies as the client takes them: `z.input` of the schemas the server validates with
 * (src/contract), so defaults may be left out and the server's 400 names anything else.
 */
export type SessionConfigInput = z.input<typeof SessionConfigSchema>
export type TurnRequest = z.input<typeof TurnRequestSchema>
export type IntentRequest = z.input<typeof IntentRequestSchema>
export type CompactRequest = z.input<typeof CompactRequestSchema>
export type ForkRequest = z.input<typeof ForkRequestSchema>
export type PermissionRequest = z.input<typeof PermissionResolutionRequestSchema>
export type PlanApprovalRequest = z.input<typeof PlanApprovalRequestSchema>
export type HandoffRouteRequest = z.input<typeof HandoffRouteRequestSchema>
export type VerifyRequest = z.input<typeof VerifyRequestSchema>
export type LoopCreateRequest = z.input<typeof LoopCreateRequestSchema>
export type LoopStepRequest = z.input<typeof LoopStepRequestSchema>
export type ResponsesRequest = z.input<typeof ResponsesRequestSchema>
export type ExecRequest = z.input<typeof ExecRequestSchema>
export type DocumentBody = z.input<typeof DocumentBodySchema>
export type ProgressUpdate = z.input<typeof ProgressUpdateSchema>
export type HandoffDocument = z.input<typeof HandoffRequestSchema>

/** Options every call takes. */
export interface CallOptions {
  signal?: AbortSignal
}

/** Options of a call the server deduplicates by Idempotency-Key. */
export interface IdempotentCallOptions extends CallOptions {
  /**
   * 1–200 characters from `A-Z a-z 0-9 . _ : -`. A retry with the same key returns the first
   * answer without running anything again. Default: a new random key per call.
   */
  idempotencyKey?: string
}

/** Options of a call that steps a session (`turns`, `complete`, `cancel`). */
export interface TurnCallOptions extends CallOptions {
  /**
   * Streams the turn (SSE) and calls this for every event as it happens, in seq order, each
   * once; the answer still holds all of them.
   */
  onEvent?: (event: SeqEvent) => void | Promise<void>
  /** How a streamed turn with an Idempotency-Key reconnects after a dropped connection. */
  retry?: RetryOptions
}

export interface TurnlineClientOptions {
  /** The server's root, e.g. `https://turnline.example.com`. */
  baseUrl: string
  /** The tenant's API key (`Authorization: Bearer …`); a single-tenant server needs none. */
  apiKey?: string
  /** Default: the platform's `fetch`. An app's own `fetch` works too (no network). */
  fetch?: FetchLike
  /** Extra headers sent with every request. */
  headers?: Record<string, string>
  /**
   * The most a whole JSON answer may hold, in bytes (default 256 MiB); past it the call fails
   * with a TurnlineAnswerTooLargeError, the rest not read.
   */
  maxAnswerBytes?: number
}

export interface TurnsQuery {
  /** 1–200 (default 50). */
  limit?: number
  cursor?: string
}

export interface ListSessionsQuery {
  workspace?: string
  status?: 'active' | 'completed'
  /** By last activity: `newest` (the server's default), the most recently active first; `oldest`. */
  order?: 'newest' | 'oldest'
  /** 1–200 (default 50). */
  limit?: number
  cursor?: string
}
