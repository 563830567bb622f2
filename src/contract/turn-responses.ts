import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { Count, Id } from './response-fields.ts'
import { ThreadEventSchema } from './thread-event.ts'

/**
 * The answers of the calls that step a session's turn (notes: `response-fields.ts`): a turn
 * route's, a webhook delivery's automation run, and the runner's exit notice that continues a
 * waiting turn.
 */

export const TURN_STATUSES = [
  'completed',
  'failed',
  'waiting',
  'awaiting_approval',
  'terminal',
] as const

export const TurnResponseSchema = lazySchema(() =>
  z
    .object({
      turn_id: Id('The turn this call stepped (`turn-<n>`).'),
      status: z
        .enum(TURN_STATUSES)
        .describe(
          '`completed`: the turn answered; `failed`: it ended with an error; `waiting`: a command still runs (call again without input); `awaiting_approval`: a tool call needs a permission answer; `terminal`: the session has ended.',
        ),
      events: z
        .array(ThreadEventSchema)
        .describe('The bare ThreadEvents this call committed, in order.'),
      next_seq: Count.describe('The seq the next event of the session will get.'),
      warnings: z
        .array(z.string())
        .optional()
        .describe('Non-fatal notices (budget warnings, pricing unavailable).'),
    })
    .meta({ id: 'TurnResponse', description: 'The outcome of one call that stepped a session.' }),
)

export const WebhookRunResponseSchema = lazySchema(() =>
  z
    .object({
      session_id: z.string().describe('The automation session (derived from the delivery id).'),
      duplicate: z.boolean().describe('True for a redelivery: the first run answers again.'),
      turn: TurnResponseSchema.describe("The run's turn."),
    })
    .meta({
      id: 'WebhookRunResponse',
      description: 'The automation run a webhook delivery started.',
    }),
)

export const RunnerCallbackResponseSchema = lazySchema(() =>
  z
    .object({
      resumed: z.boolean().describe('Whether a turn waiting on the command was continued.'),
      status: z.enum(TURN_STATUSES).optional().describe('The status of the continued turn.'),
    })
    .meta({ id: 'RunnerCallbackResponse', description: 'What a runner exit notice did.' }),
)
