import * as z from 'zod'
import { BudgetStatusSchema } from './budget-status.ts'
import { parseEventValue } from './serialize.ts'
import { SessionConfigSchema } from './session-config.ts'
import type { ParsedThreadEvent } from './thread-event.ts'
import { UsageSchema } from './usage.ts'

/**
 * Response bodies of the HTTP API (v1) as a client reads them off the wire: the typed client
 * (`client/`) validates every answer with these, and `test/unit/wire-response-types.test.ts`
 * checks at compile time that they describe exactly what the server's types (`api.ts`) promise.
 * They are tolerant where a reader must be: event types this version does not know pass through
 * opaque, error codes are any string, and objects strip fields they do not know, so an older
 * client reads a newer server's answers.
 */

/** A ThreadEvent on the wire: a known event validated by its schema, or an opaque unknown one. */
export const WireThreadEventSchema = z.unknown().transform((value, ctx): ParsedThreadEvent => {
  try {
    return parseEventValue(value)
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message })
    return z.NEVER
  }
})

/** Every error: `{"error":{"code","message","details?"}}` (codes in `errors.ts`). */
export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
})
export type ErrorBody = z.infer<typeof ErrorBodySchema>

export const TurnStatusSchema = z.enum([
  'completed',
  'failed',
  'waiting',
  'awaiting_approval',
  'terminal',
])

/** `POST …/turns`, `/complete`, `/cancel`, `/compact`, `/permissions`, `/plan-approval`. */
export const TurnResponseSchema = z.object({
  turn_id: z.string(),
  status: TurnStatusSchema,
  /** The events this call committed, in order: seqs `next_seq - events.length …`. */
  events: z.array(WireThreadEventSchema),
  /** Seq the next event of the session will get. */
  next_seq: z.number().int().min(0),
  warnings: z.array(z.string()).optional(),
})
export type TurnResponseBody = z.output<typeof TurnResponseSchema>

const SessionStatusSchema = z.enum(['active', 'completed'])

export const CreateSessionResponseSchema = z.object({
  session_id: z.string().min(1),
  thread_id: z.string().min(1),
  status: SessionStatusSchema,
})

export const ForkResponseSchema = CreateSessionResponseSchema.extend({ forked_from: z.string() })

export const SessionSummarySchema = z.object({
  session_id: z.string(),
  thread_id: z.string(),
  workspace: z.string(),
  status: SessionStatusSchema,
  created_at: z.string(),
  updated_at: z.string(),
  turn_count: z.number().int().min(0),
  event_count: z.number().int().min(0),
  last_seq: z.number().int().min(-1),
})

/** `GET /v1/sessions`: one page; pass `cursor` back for the next. */
export const SessionListSchema = z.object({
  sessions: z.array(SessionSummarySchema),
  cursor: z.string().optional(),
})

const Limit = z.object({ used: z.number(), max: z.number().optional() })

/** Where a session or loop stands against its budget (`budget-status.ts`). */
export const BudgetReportSchema = z.object({
  status: BudgetStatusSchema,
  steps: Limit,
  tokens: Limit,
  cost_usd: z.object({ spent: z.number().optional(), max: z.number().optional() }),
})

/** `GET /v1/sessions/:id`. */
export const SessionViewSchema = SessionSummarySchema.extend({
  num_turns: z.number().int().min(0),
  usage: UsageSchema,
  reasoning_tokens: z.number().int().min(0).optional(),
  total_cost_usd: z.number().optional(),
  /** The model in force: the session's own, else the deployment default. */
  model: z.string().optional(),
  /** USD per token the cost is estimated with; absent when unknown. */
  price: z.object({ input: z.number(), output: z.number() }).optional(),
  config: SessionConfigSchema,
  budget: BudgetReportSchema,
})

/** `POST …/intents`: 202. */
export const IntentResponseSchema = z.object({
  id: z.string(),
  pending: z.number().int().min(0),
})

/** One line of the NDJSON events feed: the `events.jsonl` line with its seq in front. */
export const EventFeedLineSchema = z.object({
  seq: z.number().int().min(0),
  schema_version: z.string(),
  event: WireThreadEventSchema,
})

/** `POST /v1/webhooks/:name`: the automation run of one delivery. */
export const AutomationRunResponseSchema = z.object({
  session_id: z.string(),
  duplicate: z.boolean(),
  turn: TurnResponseSchema,
})

/** `GET /healthz`. */
export const HealthResponseSchema = z.object({ status: z.literal('ok') })

/**
 * `POST /v1/responses`, `GET /v1/responses/:id`: the Open Responses resource. Only what every
 * response has is checked; the rest (output items, usage, echoed settings) is kept as sent, and
 * conforms to the published Open Responses schema (docs/http-api.md).
 */
export const OpenResponseSchema = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  status: z.string(),
  output: z.array(z.unknown()),
})

/** One streamed Open Responses event (`event: <type>`, `data: {type, sequence_number, …}`). */
export const OpenResponsesEventSchema = z.looseObject({
  type: z.string(),
  sequence_number: z.number().int().min(0),
})
