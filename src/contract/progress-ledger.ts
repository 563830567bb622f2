import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import { BoundaryStatusSchema } from './handoff.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * The progress ledger (VT Code `vtcode-memory/src/progress.rs`): the small durable answer to
 * "are we getting closer to done?" — goal, milestones, confidence, stall marker and the handoff
 * metadata — kept per workspace at `.vtcode/state/progress.json` and replaced as a whole on each
 * update (If-Match CAS). Milestone statuses use the handoff's boundary statuses, so a ledger
 * becomes a handoff's boundary list unchanged.
 */
export const PROGRESS_LEDGER_VERSION = 1

const Text = lazySchema(() => z.string().max(2000))

export const MilestoneSchema = lazySchema(() =>
  z.strictObject({
    id: z.string().min(1).max(128).describe('The milestone id.'),
    description: Text.default('').describe('What the milestone is.'),
    status: BoundaryStatusSchema.describe('`done`, `in_progress`, `not_started` or `blocked`.'),
  }),
)
export type Milestone = z.infer<typeof MilestoneSchema>

export const ProgressLedgerSchema = lazySchema(() =>
  z.object({
    schema_version: z.literal(PROGRESS_LEDGER_VERSION).describe('Version of the ledger format.'),
    session_id: z.string().describe('The session that last updated the ledger.'),
    goal: z.string().describe('The overall goal.'),
    milestones: z.array(MilestoneSchema).max(200).describe('The milestones, in order.'),
    confidence: z.number().min(0).max(1).describe('0.0–1.0.'),
    stalled_since: z
      .string()
      .nullable()
      .describe(
        'RFC 3339 of the first signal without progress since the last advance; null = on track.',
      ),
    stall_count: z.number().int().nonnegative().describe('Stall signals since the last advance.'),
    advances: z
      .number()
      .int()
      .nonnegative()
      .describe('Advance signals (completed turns after a stall, completed loop steps).'),
    updated_at: z.string().describe('RFC 3339 time of the last update.'),
    previous_session_id: z
      .string()
      .nullable()
      .describe('The session that updated it before; null at first.'),
    handoff_summary: z.string().nullable().describe("The last handoff's summary; null when none."),
    known_issues: z.array(Text).max(100).describe('Known problems.'),
    git_checkpoint: z
      .string()
      .nullable()
      .describe('The commit the progress refers to; null when unknown.'),
  }),
)
export type ProgressLedger = z.infer<typeof ProgressLedgerSchema>

/**
 * An update (`PUT …/artifacts/progress`, the `update_progress` tool): fields given replace the
 * stored ones, fields left out keep their value; `milestone_status` changes single milestones.
 */
export const ProgressUpdateSchema = lazySchema(() =>
  z.strictObject({
    goal: z.string().min(1).max(4000).optional().describe('The overall goal.'),
    milestones: z.array(MilestoneSchema).max(200).optional().describe('The milestones, in order.'),
    milestone_status: z
      .array(
        z.strictObject({
          id: z.string().min(1).max(128).describe('The milestone id.'),
          status: BoundaryStatusSchema.describe(
            '`done`, `in_progress`, `not_started` or `blocked`.',
          ),
        }),
      )
      .max(200)
      .optional()
      .describe('New statuses for milestones by id.'),
    confidence: z.number().min(0).max(1).optional().describe('Confidence in the progress, 0 to 1.'),
    known_issues: z.array(Text).max(100).optional().describe('Known problems.'),
    stalled: z
      .boolean()
      .optional()
      .describe('true marks a stall now, false clears it (an advance).'),
    git_checkpoint: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .describe('The commit the progress refers to; null when unknown.'),
  }),
)
export type ProgressUpdate = z.infer<typeof ProgressUpdateSchema>

export function parseProgressLedger(text: string): ProgressLedger {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new TurnlineError('corrupt_data', 'progress.json is not valid JSON')
  }
  const result = ProgressLedgerSchema.safeParse(value)
  if (result.success) return result.data
  const version = (value as { schema_version?: unknown } | null)?.schema_version
  throw new TurnlineError(
    version === PROGRESS_LEDGER_VERSION ? 'corrupt_data' : 'unsupported_version',
    version === PROGRESS_LEDGER_VERSION
      ? `progress.json is invalid: ${z.prettifyError(result.error)}`
      : `progress.json has an unknown schema_version (expected ${PROGRESS_LEDGER_VERSION})`,
  )
}

export function serializeProgressLedger(ledger: ProgressLedger): string {
  return `${JSON.stringify(ledger, null, 2)}\n`
}
