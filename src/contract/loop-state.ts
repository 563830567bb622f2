import * as z from 'zod'
import type { BudgetReport } from './budget-status.ts'
import { BudgetStatusSchema, CostBudgetSchema } from './budget-status.ts'
import { TurnlineError } from './errors.ts'
import { SessionConfigSchema } from './session-config.ts'

/**
 * Loop run state (VT Code `loop_state.rs`): a loop is a scheduler's repeated invocations of one
 * task — each step one fresh session that orients from the workspace's artifacts — persisted at
 * `.vtcode/state/loop-<id>.json` (VT Code's fields, plus what a service needs to resume a step
 * in a cold process: the task, the step sessions' settings, the budget and its use, and the
 * step in progress). Replaced with If-Match CAS; never lost, never double-counted.
 */
export const LOOP_STATE_VERSION = 1
export const LOOP_ID = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/
export const RECENT_LOOP_STEPS = 20

export const LoopStatusSchema = z.enum(['running', 'completed', 'failed', 'paused'])
export type LoopStatus = z.infer<typeof LoopStatusSchema>

const Count = z.number().int().nonnegative()

export const LoopStepRecordSchema = z.object({
  index: Count,
  session_id: z.string(),
  /** thread.completed of the step's session. */
  subtype: z.string(),
  outcome_code: z.string(),
  input_tokens: Count,
  output_tokens: Count,
  /** Null when the model's pricing is unknown. */
  cost_usd: z.number().nonnegative().nullable(),
  started_at: z.string(),
  ended_at: z.string(),
  /** The step's final answer (cut), on success. */
  result: z.string().optional(),
})
export type LoopStepRecord = z.infer<typeof LoopStepRecordSchema>

export const LoopRunStateSchema = z.object({
  schema_version: z.literal(LOOP_STATE_VERSION),
  // — VT Code's LoopRunState —
  loop_id: z.string().regex(LOOP_ID),
  /** Zero-based index of the next step (= steps completed). */
  step_index: Count,
  last_artifact_path: z.string().nullable(),
  status: LoopStatusSchema,
  started_at: z.string(),
  updated_at: z.string(),
  // — Turnline —
  workspace: z.string(),
  task: z.string(),
  /** The settings each step's session is created with. */
  session: SessionConfigSchema,
  budget: CostBudgetSchema,
  budget_status: BudgetStatusSchema,
  cumulative: z.object({
    input_tokens: Count,
    output_tokens: Count,
    total_cost_usd: z.number().nonnegative(),
    /** A step's model had no pricing: `total_cost_usd` is a lower bound. */
    cost_unknown: z.boolean(),
  }),
  /** The step claimed and not yet accounted for (it resumes with the same session). */
  current_step: z
    .object({ index: Count, session_id: z.string(), started_at: z.string() })
    .nullable(),
  last_session_id: z.string().nullable(),
  /** The newest steps, oldest first. */
  steps: z.array(LoopStepRecordSchema).max(RECENT_LOOP_STEPS),
})
export type LoopRunState = z.infer<typeof LoopRunStateSchema>

export function parseLoopState(text: string): LoopRunState {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new TurnlineError('corrupt_data', 'loop state is not valid JSON')
  }
  const result = LoopRunStateSchema.safeParse(value)
  if (result.success) return result.data
  const version = (value as { schema_version?: unknown } | null)?.schema_version
  throw new TurnlineError(
    version === LOOP_STATE_VERSION ? 'corrupt_data' : 'unsupported_version',
    version === LOOP_STATE_VERSION
      ? `loop state is invalid: ${z.prettifyError(result.error)}`
      : `loop state has an unknown schema_version (expected ${LOOP_STATE_VERSION})`,
  )
}

/** Pretty JSON, as VT Code writes loop state. */
export function serializeLoopState(state: LoopRunState): string {
  return `${JSON.stringify(state, null, 2)}\n`
}

/** `<prefix>/<tenant>/.turnline/loops/<loop_id>.json`: the loop's workspace (create-only). */
export const LoopPointerSchema = z.strictObject({
  format: z.literal('turnline.loop-pointer'),
  version: z.literal(1),
  loop_id: z.string().regex(LOOP_ID),
  workspace: z.string().min(1),
  created_at: z.string(),
})
export type LoopPointer = z.infer<typeof LoopPointerSchema>

/** `POST /v1/loops`. */
export const LoopCreateRequestSchema = z.strictObject({
  /** Chosen by the scheduler (creating it twice is 409), else generated. */
  loop_id: z.string().regex(LOOP_ID, 'use 1–64 characters from A-Z a-z 0-9 _ -').optional(),
  /** What every step is asked to do (its first user message). */
  task: z.string().min(1).max(100_000),
  /** Settings of each step's session (its workspace is the loop's). */
  session: SessionConfigSchema.default(SessionConfigSchema.parse({})),
  budget: CostBudgetSchema.default(CostBudgetSchema.parse({})),
})
export type LoopCreateRequest = z.infer<typeof LoopCreateRequestSchema>

/** `POST /v1/loops/:id/step`: run the next step, or change the loop's status or budget. */
export const LoopStepRequestSchema = z.strictObject({
  /** Added to the task for this step only. */
  input: z.string().min(1).max(100_000).optional(),
  /** Instead of a step: pause, resume, complete or fail the loop. */
  control: z.enum(['pause', 'resume', 'complete', 'fail']).optional(),
  /** Raise or lower limits (with or without a control). */
  budget: CostBudgetSchema.partial().optional(),
})
export type LoopStepRequest = z.infer<typeof LoopStepRequestSchema>

/** A loop as the API shows it: the stored state and its budget report. */
export type LoopView = LoopRunState & { budget_report: BudgetReport }

export interface LoopStepResponse {
  loop: LoopView
  /** The step that ran (absent for a control, or when the budget stopped the loop first). */
  step?: LoopStepRecord
  /** A step whose session waits (a command still runs, or a tool call needs approval). */
  waiting?: { session_id: string; status: string }
}

export type LoopCreateInput = z.input<typeof LoopCreateRequestSchema>

/** A create-loop body, validated (400 with every problem named). */
export function readLoopCreateRequest(body: unknown): LoopCreateRequest {
  const result = LoopCreateRequestSchema.safeParse(body)
  if (result.success) return result.data
  throw new TurnlineError('invalid_input', `invalid loop: ${z.prettifyError(result.error)}`, {
    details: {
      issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    },
  })
}
