import * as z from 'zod'
import type { BudgetReport } from './budget-status.ts'
import { lazySchema } from './lazy-schema.ts'
import { LimitsSchema } from './limits-config.ts'
import { pageLimit } from './page-limit.ts'
import type { SessionConfig } from './session-config.ts'
import type { ThreadEvent } from './thread-event.ts'
import { INPUT_TEXT_MAX_CHARS, TurnInputSchema } from './turn-input.ts'
import type { Usage } from './usage.ts'

/** Request and response bodies of the HTTP API (v1). Requests are zod-validated at ingress. */

/**
 * The limits a turn (or a fork) may change: the session's counts (model requests, turns, tokens,
 * cost) stay as they are, so a new limit is compared with what was used so far.
 */
export const LimitsChangeSchema = lazySchema(() =>
  LimitsSchema.pick({
    max_turns: true,
    max_budget_usd: true,
    max_tokens: true,
    max_steps: true,
  }).refine((limits) => Object.keys(limits).length > 0, 'name at least one limit'),
)
export type LimitsChange = z.infer<typeof LimitsChangeSchema>

export const TurnRequestSchema = lazySchema(() =>
  z.strictObject({
    input: TurnInputSchema.optional().describe(
      'The user message of this turn: a string, or `input_text` and `input_image` parts; optional when the turn continues (approval, waits).',
    ),
    limits: LimitsChangeSchema.optional().describe(
      "New limits of the session from this turn on: each one given replaces the session's (the others stay), compared with what the session used so far. A session that reached a limit is completed: fork it with new `limits` instead.",
    ),
  }),
)
export type TurnRequest = z.infer<typeof TurnRequestSchema>

export const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,200}$/

export type TurnStatus = 'completed' | 'failed' | 'waiting' | 'awaiting_approval' | 'terminal'

export interface TurnResponse {
  turn_id: string
  status: TurnStatus
  /** Bare ThreadEvents committed by this turn, in order. */
  events: ThreadEvent[]
  /** Seq the next event of the session will get. */
  next_seq: number
  /** Non-fatal notices (budget warnings, pricing unavailable). */
  warnings?: string[]
}

export interface CreateSessionResponse {
  session_id: string
  thread_id: string
  status: 'active' | 'completed'
}

/** A listed session: what its manifest says. */
export interface SessionSummary {
  session_id: string
  thread_id: string
  workspace: string
  status: 'active' | 'completed'
  created_at: string
  updated_at: string
  turn_count: number
  event_count: number
  last_seq: number
  /** The first recorded turn input, trimmed; absent until a turn recorded text. */
  title?: string
}

/** A session as `GET /v1/sessions` lists it: its summary, last activity and state between calls. */
export interface ListedSession extends SessionSummary {
  /** RFC 3339: what the listing is ordered by (src/ports/activity-index.ts). */
  last_activity_at: string
  activity_state?: SessionActivity['state']
  turn_state?: SessionActivity['turn_state']
}

export interface SessionView extends SessionSummary {
  /** Model requests so far (thread.completed num_turns). */
  num_turns: number
  usage: Usage
  /** Reasoning tokens within usage.output_tokens, when the provider reported them. */
  reasoning_tokens?: number
  /** Tokens of usage estimated with a tokenizer because the provider reported none. */
  estimated_tokens?: number
  total_cost_usd?: number
  /** The model in force: the session's own, else the deployment default. */
  model?: string
  /**
   * USD per token the cost is estimated with (input read from and written to the provider's
   * prompt cache at their own prices, when the price has them); absent when unknown.
   */
  price?: { input: number; output: number; cached_input?: number; cache_write?: number }
  config: SessionConfig
  /** The session's guardrails: steps (turns), tokens and cost against its limits. */
  budget: BudgetReport
  /** What the session is doing between calls (session/current-activity.ts); absent when idle. */
  activity?: SessionActivity
}

/** A turn left open or a plan waiting, as `GET /v1/sessions/:id` shows it. */
export interface SessionActivity {
  state: 'open' | 'waiting' | 'awaiting_approval' | 'awaiting_plan_approval'
  turn_id: string
  item_id?: string
  tool_name?: string
  command?: string
  since?: string
  /** From the session's lease (core/session/turn-state.ts): someone runs it, or it was left. */
  turn_state?: 'running' | 'interrupted'
}

export const ListSessionsQuerySchema = lazySchema(() =>
  z.strictObject({
    workspace: z
      .string()
      .min(1)
      .max(128)
      .default('default')
      .describe('The workspace whose sessions are listed.'),
    status: z.enum(['active', 'completed']).optional().describe('Only sessions with this status.'),
    order: z
      .enum(['newest', 'oldest'])
      .default('newest')
      .describe(
        "By last activity (`last_activity_at`: creation, or the end of the last call that committed to the session): `newest` (the default), the most recently active first; `oldest`, the least recently active first. A cursor continues the walk it was made in, in the order as it stood at the walk's first page.",
      ),
    cursor: z.string().min(1).max(2048).optional().describe('The `cursor` of the previous page.'),
    limit: pageLimit(200, 50, 'Sessions per page (default 50) or events per page (default 1000).'),
  }),
)
export type ListSessionsQuery = z.infer<typeof ListSessionsQuerySchema>

export const EventsQuerySchema = lazySchema(() =>
  z.strictObject({
    after: z.coerce
      .number()
      .int()
      .min(-1)
      .optional()
      .describe('Only events with a greater seq (-1: from the start).'),
    follow: z
      .enum(['0', '1', 'true', 'false'])
      .optional()
      .describe('`1`/`true`: keep the stream open until `thread.completed` (or the follow limit).'),
    limit: pageLimit(
      5000,
      1000,
      'Sessions per page (default 50) or events per page (default 1000).',
    ),
  }),
)

export const TurnsQuerySchema = lazySchema(() =>
  z.strictObject({
    cursor: z
      .string()
      .min(1)
      .max(32)
      .optional()
      .describe('The `cursor` of the previous page; absent: from the first turn.'),
    limit: pageLimit(200, 50, 'Turns per page (default 50).'),
  }),
)
export type TurnsQuery = z.infer<typeof TurnsQuerySchema>

/** `POST /v1/sessions/:id/intents`: a steering follow-up for the next turn boundary. */
export const IntentRequestSchema = lazySchema(() =>
  z.strictObject({
    text: z
      .string()
      .min(1)
      .max(INPUT_TEXT_MAX_CHARS)
      .describe(
        'The follow-up message, delivered at the next turn boundary. Over the inline limit (`TURNLINE_TOOL_MAX_RESPONSE_BYTES`, 64 KiB) it is kept whole as an artifact of the session when it is accepted, and the model reads a preview naming it (as a long turn input).',
      ),
  }),
)
export type IntentRequest = z.infer<typeof IntentRequestSchema>

export interface IntentResponse {
  /** UUIDv4 of the intent; its user message carries it as `intent_id`. */
  id: string
  /** Intents now pending (queued and in flight), this one included. */
  pending: number
}
