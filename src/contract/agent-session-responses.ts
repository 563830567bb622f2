import * as z from 'zod'
import { FrozenOrientationSchema, OrientReasonSchema } from './agent-state.ts'
import { HandoffRequestSchema } from './handoff.ts'
import { lazySchema } from './lazy-schema.ts'
import { CreateSessionResponseSchema } from './session-responses.ts'
import { TurnResponseSchema } from './turn-responses.ts'

/**
 * The answers of the agent-layer session routes (docs/agent-layer.md; notes:
 * `response-fields.ts`): a verification's verdict, a handoff to the next agent, the orientation
 * context.
 */

export const VerifyResponseSchema = lazySchema(() =>
  TurnResponseSchema.extend({
    verification: z
      .object({
        id: z.string().describe('Id of the verification (the harness items carry it).'),
        verdict: z.enum(['approved', 'rejected']).describe("The verifier's verdict."),
        issues: z
          .array(z.string())
          .describe('Concrete issues the verifier named (empty when approved).'),
        reasoning: z.string().describe("The verifier's reasoning (its final answer, cut)."),
        paths: z.array(z.string()).describe('The files verified, relative to the workspace.'),
        turn_id: z.string().optional().describe('The turn whose changes were verified.'),
        verifier_session: z
          .string()
          .optional()
          .describe("The verifier's own session (its events show what it read and tried)."),
      })
      .describe('The verdict.'),
  }).meta({
    id: 'VerifyResponse',
    description: "The proposer's committed events (the harness items) and the verdict.",
  }),
)

export const HandoffResponseSchema = lazySchema(() =>
  z
    .object({
      handoff: HandoffRequestSchema.describe('The HandoffRequest as stored.'),
      prompt: z
        .string()
        .describe('The handoff as the next agent reads it (`## HANDOFF FROM PREVIOUS AGENT` …).'),
      path: z.string().describe("Where it was stored for the workspace's next agent."),
      session: CreateSessionResponseSchema.extend({
        handed_off_from: z.string().describe('The source session.'),
        duplicate: z
          .boolean()
          .optional()
          .describe('True when an Idempotency-Key retry answered the session started before.'),
      })
        .optional()
        .describe("The next agent's session, when `start` was set."),
      source_completion: TurnResponseSchema.optional().describe(
        "The source's terminal turn, when `end_source` was set.",
      ),
      warnings: z.array(z.string()).optional().describe('Non-fatal notices.'),
    })
    .meta({ id: 'HandoffResponse', description: "A session's handoff to the next agent." }),
)

export const OrientationViewSchema = lazySchema(() =>
  z
    .object({
      session_id: z.string().describe('The session.'),
      orientation: FrozenOrientationSchema.nullable().describe(
        'The section the system prompt carries now; null when none was frozen yet.',
      ),
      pending: OrientReasonSchema.optional().describe(
        'The orient phase waits for the next new turn (and this is why).',
      ),
      preview: FrozenOrientationSchema.optional().describe(
        'With `?preview=1`: what an orient phase would build now (not frozen).',
      ),
      warnings: z
        .array(z.string())
        .optional()
        .describe('Artifacts that could not be read while previewing.'),
    })
    .meta({ id: 'OrientationView', description: "A session's orientation context." }),
)
