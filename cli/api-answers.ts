import * as z from 'zod'
import { parseEventValue } from '../src/contract/serialize.ts'
import type { ParsedThreadEvent } from '../src/contract/thread-event.ts'

/**
 * The server's answers as the CLI reads them, validated with zod (the CLI trusts no wire). Events
 * are decoded with the contract's own event reader, so unknown event types pass through intact.
 */

export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
})

export const CreatedSessionSchema = z.object({
  session_id: z.string().min(1),
  thread_id: z.string().min(1),
})

export const ForkedSessionSchema = CreatedSessionSchema.extend({ forked_from: z.string() })

export const SessionSummarySchema = z.object({
  session_id: z.string(),
  thread_id: z.string(),
  workspace: z.string(),
  status: z.enum(['active', 'completed']),
  created_at: z.string(),
  updated_at: z.string(),
  turn_count: z.number(),
  event_count: z.number(),
  last_seq: z.number(),
})
export type SessionSummary = z.infer<typeof SessionSummarySchema>

export const SessionListSchema = z.object({
  sessions: z.array(SessionSummarySchema),
  cursor: z.string().optional(),
})

export const SessionViewSchema = SessionSummarySchema.extend({
  num_turns: z.number(),
  config: z
    .object({ model: z.union([z.string(), z.object({ name: z.string() })]).optional() })
    .passthrough(),
})
export type SessionView = z.infer<typeof SessionViewSchema>

const TurnAnswerSchema = z.object({
  turn_id: z.string(),
  status: z.enum(['completed', 'failed', 'waiting', 'awaiting_approval', 'terminal']),
  events: z.array(z.unknown()),
  next_seq: z.number().int().min(0),
  warnings: z.array(z.string()).optional(),
})

export type TurnStatus = z.infer<typeof TurnAnswerSchema>['status']

export interface TurnAnswer {
  turn_id: string
  status: TurnStatus
  /** The turn's events with their seqs. */
  events: SeqEvent[]
  next_seq: number
  warnings: string[]
}

export interface SeqEvent {
  seq: number
  event: ParsedThreadEvent
}

export function parseTurnAnswer(value: unknown): TurnAnswer {
  const answer = TurnAnswerSchema.parse(value)
  const first = answer.next_seq - answer.events.length
  return {
    turn_id: answer.turn_id,
    status: answer.status,
    events: answer.events.map((event, i) => ({ seq: first + i, event: parseEventValue(event) })),
    next_seq: answer.next_seq,
    warnings: answer.warnings ?? [],
  }
}

const FeedLineSchema = z.object({ seq: z.number().int().min(0), event: z.unknown() })

/** One line of the NDJSON events feed: `{seq, schema_version, event}`. */
export function parseFeedLine(line: string): SeqEvent {
  const value = FeedLineSchema.parse(JSON.parse(line))
  return { seq: value.seq, event: parseEventValue(value.event) }
}
