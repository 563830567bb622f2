import * as z from 'zod'
import { PatchChangeKindSchema } from './enums.ts'
import { HandoffRequestSchema } from './handoff.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * The agent-engineering part of a session's engine state (`agent`): the orient phase, the
 * handoff it started from, where it came from, the changes of its recent turns with their
 * verification, and feedback its next turn starts with. Every field is optional, so states
 * written before this existed parse unchanged (and never orient).
 */

const Count = lazySchema(() => z.number().int().nonnegative())
const Hash16 = lazySchema(() => z.string().regex(/^[0-9a-f]{16}$/))

export const ORIENT_REASONS = [
  'session_start',
  'fork',
  'handoff',
  'context_reset',
  'plan_handoff',
] as const
export const OrientReasonSchema = lazySchema(() => z.enum(ORIENT_REASONS))
export type OrientReason = z.infer<typeof OrientReasonSchema>

/** The `[Orientation Context]` section as frozen into the request segment. */
export const FrozenOrientationSchema = lazySchema(() =>
  z.object({
    text: z.string().describe("The rendered section ('' when there was nothing to orient from)."),
    digest: Hash16.describe('hash16 of `text`: part of the prefix hash through the system prompt.'),
    tokens: Count.describe('Estimated tokens of `text` (4 characters per token).'),
    budget: Count.describe('The budget it was built within.'),
    reason: OrientReasonSchema.describe('Why the orientation was built.'),
    built_at: z.string().describe('RFC 3339.'),
    sections: z.array(z.string()).describe('Section titles in order.'),
    trimmed: z
      .array(z.string())
      .optional()
      .describe('Sections cut down to a reference to stay within the budget.'),
  }),
)
export type FrozenOrientation = z.infer<typeof FrozenOrientationSchema>

export const VerificationRecordSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    verdict: z.enum(['approved', 'rejected']),
    at: z.string().describe('RFC 3339.'),
    verifier_session: z.string().optional(),
  }),
)
export type VerificationRecord = z.infer<typeof VerificationRecordSchema>

/** What one turn changed in the workspace (its `file_change` items), newest last. */
export const TurnChangesSchema = lazySchema(() =>
  z.object({
    turn_id: z.string(),
    changes: z.array(z.object({ path: z.string(), kind: PatchChangeKindSchema })).max(1000),
    verification: VerificationRecordSchema.optional(),
  }),
)
export type TurnChanges = z.infer<typeof TurnChangesSchema>
export const RECENT_CHANGED_TURNS = 8

export const SessionOriginSchema = lazySchema(() =>
  z.object({
    kind: z.enum(['fork', 'handoff', 'loop', 'verifier']),
    session_id: z.string().optional(),
    loop_id: z.string().optional(),
    step_index: Count.optional(),
  }),
)
export type SessionOrigin = z.infer<typeof SessionOriginSchema>

export const AgentStateSchema = lazySchema(() =>
  z.object({
    orient_pending: OrientReasonSchema.optional().describe(
      'The next new turn orients first (and this is why); cleared once it has.',
    ),
    orientation: FrozenOrientationSchema.optional(),
    handoff: HandoffRequestSchema.optional().describe(
      'The handoff this session continues from (fork, handoff, plan → build).',
    ),
    origin: SessionOriginSchema.optional(),
    role: z
      .enum(['agent', 'verifier'])
      .optional()
      .describe(
        'A verifier sub-agent: read-only sandbox tools only, no orientation, no artifact tools.',
      ),
    changes: z.array(TurnChangesSchema).max(RECENT_CHANGED_TURNS).optional(),
    feedback: z
      .array(z.string())
      .max(16)
      .optional()
      .describe("Messages the next new turn starts with (a verifier's rejection)."),
    stall_streak: Count.optional().describe(
      "Consecutive failed turns: the progress ledger's stall signal.",
    ),
    reset_manifest: z
      .string()
      .optional()
      .describe(
        'The context reset manifest this session wrote, as written (orientation after the reset).',
      ),
  }),
)
export type AgentState = z.infer<typeof AgentStateSchema>
