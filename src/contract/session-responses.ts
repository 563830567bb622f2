import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { Count, Id } from './response-fields.ts'
import { ThreadEventSchema } from './thread-event.ts'
import { TurnInputRecordSchema } from './turn-input-record.ts'

/**
 * The answers of the session routes (notes: `response-fields.ts`): a session created or forked,
 * the session, turn and workspace listings, a line of the events feed, a follow-up queued. The
 * one session (`GET /v1/sessions/{id}`) is in `session-view-response.ts`, on the fields here.
 */

const SessionStatus = lazySchema(() =>
  z.enum(['active', 'completed']).describe('`completed` after thread.completed.'),
)

export const CreateSessionResponseSchema = lazySchema(() =>
  z
    .object({
      session_id: Id('The session id (the path segment of every session route).'),
      thread_id: Id('The VT Code thread id of the session.'),
      status: SessionStatus,
    })
    .meta({ id: 'CreateSessionResponse', description: 'A session just created.' }),
)

export const ActivityState = lazySchema(() =>
  z.enum(['open', 'waiting', 'awaiting_approval', 'awaiting_plan_approval']),
)
export const TurnState = lazySchema(() => z.enum(['running', 'interrupted']))

/** What a session's summary and its view both say, from its manifest. */
export const summaryFields = {
  session_id: Id('The session id.'),
  thread_id: Id('The VT Code thread id.'),
  workspace: Id('The workspace the session runs in.'),
  status: SessionStatus,
  created_at: z.string().describe('RFC 3339 time of thread.started.'),
  updated_at: z.string().describe('RFC 3339 time of the last commit.'),
  turn_count: Count.describe('Turns started so far.'),
  event_count: Count.describe('Events committed so far.'),
  last_seq: z.number().int().min(-1).describe('Seq of the newest event (-1 before any).'),
  title: z
    .string()
    .optional()
    .describe(
      "The session's first recorded turn input (its text, white space collapsed, at most 120 characters); absent until a turn recorded text.",
    ),
}

export const SessionSummarySchema = lazySchema(() =>
  z
    .object({
      ...summaryFields,
      last_activity_at: z
        .string()
        .optional()
        .describe(
          "RFC 3339 time of the session's last activity, what a listing is ordered by: its creation, or the end of the last call that committed to it (a turn, an approval, a cancel); present in listings.",
        ),
      activity_state: ActivityState.optional().describe(
        'In listings: what the session waits for between calls, as `activity.state` of `GET /v1/sessions/{id}` says it; absent when no turn is open and no plan waits.',
      ),
      turn_state: TurnState.optional().describe(
        'In listings: as `activity.turn_state` of `GET /v1/sessions/{id}`: `running` while an instance works on the open turn, `interrupted` when the turn is `open` and nobody does (resume it with `POST …/turns`).',
      ),
    })
    .meta({ id: 'SessionSummary', description: 'A listed session: what its manifest says.' }),
)

export const SessionListSchema = lazySchema(() =>
  z
    .object({
      sessions: z
        .array(SessionSummarySchema)
        .describe('One page, by last activity: the latest first (`order=newest`) or the earliest.'),
      cursor: z
        .string()
        .optional()
        .describe('Opaque: pass it back as `cursor` for the next page; absent on the last page.'),
    })
    .meta({ id: 'SessionList', description: "One page of the tenant's sessions of a workspace." }),
)

export const TurnListSchema = lazySchema(() =>
  z
    .object({
      turns: z
        .array(
          z.object({
            turn_id: z.string().optional().describe('The turn id (`turn-<n>`).'),
            seq: Count.describe('Seq of its `turn.started` event.'),
            started_at: z.string().describe('RFC 3339 time the turn started (its first commit).'),
            input: TurnInputRecordSchema.omit({ version: true })
              .optional()
              .describe(
                'What the turn was asked: `input` as the request gave it, `follow_ups` applied as it started; absent when nothing was recorded (a turn from before inputs were recorded, or of a newer record version).',
              ),
          }),
        )
        .describe('In order, oldest first.'),
      cursor: z
        .string()
        .optional()
        .describe('Opaque: pass it back as `cursor` for the next page; absent on the last page.'),
    })
    .meta({ id: 'TurnList', description: "One page of a session's turns with their inputs." }),
)

export const WorkspaceListSchema = lazySchema(() =>
  z
    .object({
      workspaces: z
        .array(
          z.object({
            workspace: z.string().describe('The workspace name.'),
            sessions: z.number().int().nonnegative().describe('How many sessions it holds.'),
          }),
        )
        .describe('In name order.'),
    })
    .meta({
      id: 'WorkspaceList',
      description: "The tenant's workspaces with their session counts.",
    }),
)

export const SequencedEventSchema = lazySchema(() =>
  z
    .object({
      seq: Count.describe('Position of the event in the session (0-based, gapless).'),
      schema_version: z.literal('0.11.0').describe('VT Code event schema version.'),
      event: ThreadEventSchema.describe('The bare ThreadEvent.'),
    })
    .meta({ id: 'SequencedEvent', description: 'One line of the NDJSON events feed.' }),
)

export const IntentResponseSchema = lazySchema(() =>
  z
    .object({
      id: z.string().describe('UUIDv4 of the intent; its user message carries it as `intent_id`.'),
      pending: Count.describe('Intents now pending (queued and in flight), this one included.'),
    })
    .meta({ id: 'IntentResponse', description: 'A steering follow-up accepted into the queue.' }),
)

export const ForkResponseSchema = lazySchema(() =>
  CreateSessionResponseSchema.extend({
    forked_from: Id('The source session.'),
  }).meta({ id: 'ForkResponse', description: 'The new session a fork created.' }),
)
