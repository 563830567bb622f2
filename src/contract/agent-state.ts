import * as z from 'zod'
import { PatchChangeKindSchema } from './enums.ts'
import { HandoffRequestSchema } from './handoff.ts'

/**
 * The agent-engineering part of a session's engine state (`agent`): the orient phase, the
 * handoff it started from, where it came from, the changes of its recent turns with their
 * verification, and feedback its next turn starts with. Every field is optional, so states
 * written before this existed parse unchanged (and never orient).
 */

const Count = z.number().int().nonnegative()
const Hash16 = z.string().regex(/^[0-9a-f]{16}$/)

export const ORIENT_REASONS = [
  'session_start',
  'fork',
  'handoff',
  'context_reset',
  'plan_handoff',
] as const
export const OrientReasonSchema = z.enum(ORIENT_REASONS)
export type OrientReason = z.infer<typeof OrientReasonSchema>

/** The `[Orientation Context]` section as frozen into the request segment. */
export const FrozenOrientationSchema = z.object({
  /** The rendered section ('' when there was nothing to orient from). */
  text: z.string(),
  /** hash16 of `text`: part of the prefix hash through the system prompt. */
  digest: Hash16,
  /** Estimated tokens of `text` (4 characters per token). */
  tokens: Count,
  /** The budget it was built within. */
  budget: Count,
  reason: OrientReasonSchema,
  /** RFC 3339. */
  built_at: z.string(),
  /** Section titles in order. */
  sections: z.array(z.string()),
  /** Sections cut down to a reference to stay within the budget. */
  trimmed: z.array(z.string()).optional(),
})
export type FrozenOrientation = z.infer<typeof FrozenOrientationSchema>

export const VerificationRecordSchema = z.object({
  id: z.string(),
  verdict: z.enum(['approved', 'rejected']),
  /** RFC 3339. */
  at: z.string(),
  verifier_session: z.string().optional(),
})
export type VerificationRecord = z.infer<typeof VerificationRecordSchema>

/** What one turn changed in the workspace (its `file_change` items), newest last. */
export const TurnChangesSchema = z.object({
  turn_id: z.string(),
  changes: z.array(z.object({ path: z.string(), kind: PatchChangeKindSchema })).max(1000),
  verification: VerificationRecordSchema.optional(),
})
export type TurnChanges = z.infer<typeof TurnChangesSchema>
export const RECENT_CHANGED_TURNS = 8

export const SessionOriginSchema = z.object({
  kind: z.enum(['fork', 'handoff', 'loop', 'verifier']),
  session_id: z.string().optional(),
  loop_id: z.string().optional(),
  step_index: Count.optional(),
})
export type SessionOrigin = z.infer<typeof SessionOriginSchema>

export const AgentStateSchema = z.object({
  /** The next new turn orients first (and this is why); cleared once it has. */
  orient_pending: OrientReasonSchema.optional(),
  orientation: FrozenOrientationSchema.optional(),
  /** The handoff this session continues from (fork, handoff, plan → build). */
  handoff: HandoffRequestSchema.optional(),
  origin: SessionOriginSchema.optional(),
  /** A verifier sub-agent: read-only sandbox tools only, no orientation, no artifact tools. */
  role: z.enum(['agent', 'verifier']).optional(),
  changes: z.array(TurnChangesSchema).max(RECENT_CHANGED_TURNS).optional(),
  /** Messages the next new turn starts with (a verifier's rejection). */
  feedback: z.array(z.string()).max(16).optional(),
  /** Consecutive failed turns: the progress ledger's stall signal. */
  stall_streak: Count.optional(),
  /** The context reset manifest this session wrote, as written (orientation after the reset). */
  reset_manifest: z.string().optional(),
})
export type AgentState = z.infer<typeof AgentStateSchema>
