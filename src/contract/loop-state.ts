import * as z from 'zod'
import type { BudgetReport } from './budget-status.ts'
import { BudgetStatusSchema, CostBudgetSchema } from './budget-status.ts'
import { TurnlineError } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'
import { CronSchema, LoopRunSchema, LoopScheduleSchema } from './loop-run.ts'
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

export const LoopStatusSchema = lazySchema(() =>
  z.enum(['running', 'completed', 'failed', 'paused']),
)
export type LoopStatus = z.infer<typeof LoopStatusSchema>

const Count = lazySchema(() => z.number().int().nonnegative())

export const LoopStepRecordSchema = lazySchema(() =>
  z.object({
    index: Count.describe("The step's index (0-based)."),
    session_id: z.string().describe("The step's session."),
    subtype: z.string().describe("thread.completed of the step's session."),
    outcome_code: z.string().describe("Outcome code of the step's session."),
    input_tokens: Count.describe('Input tokens so far.'),
    output_tokens: Count.describe('Output tokens so far.'),
    cost_usd: z
      .number()
      .nonnegative()
      .nullable()
      .describe("Null when the model's pricing is unknown."),
    started_at: z.string().describe('RFC 3339 start time.'),
    ended_at: z.string().describe('RFC 3339 end time.'),
    result: z.string().optional().describe("The step's final answer (cut), on success."),
  }),
)
export type LoopStepRecord = z.infer<typeof LoopStepRecordSchema>

export const LoopRunStateSchema = lazySchema(() =>
  z.object({
    schema_version: z.literal(LOOP_STATE_VERSION).describe('Version of the stored loop state.'),
    // — VT Code's LoopRunState —
    loop_id: z.string().regex(LOOP_ID).describe('The loop id.'),
    step_index: Count.describe('Zero-based index of the next step (= steps completed).'),
    last_artifact_path: z
      .string()
      .nullable()
      .describe(
        "Where the last step's session can be read, relative to the workspace folder: its `events.jsonl` on a store that appends (fs), its `manifest.json`, which lists the parts that hold its events, on one that cannot (S3); null before any.",
      ),
    status: LoopStatusSchema.describe('`running`, `paused`, `completed` or `failed`.'),
    started_at: z.string().describe('RFC 3339 start time.'),
    updated_at: z.string().describe('RFC 3339 time of the last change.'),
    // — Turnline —
    workspace: z.string().describe('The workspace every step runs in.'),
    task: z.string().describe('What every step is asked to do.'),
    session: SessionConfigSchema.describe("The settings each step's session is created with."),
    budget: CostBudgetSchema.describe("The loop's limits (VT Code CostBudget)."),
    budget_status: BudgetStatusSchema.describe('The first limit reached, or `ok`.'),
    cumulative: z
      .object({
        input_tokens: Count.describe('Input tokens so far.'),
        output_tokens: Count.describe('Output tokens so far.'),
        total_cost_usd: z.number().nonnegative().describe('Cost so far in US dollars.'),
        cost_unknown: z
          .boolean()
          .describe("A step's model had no pricing: `total_cost_usd` is a lower bound."),
      })
      .describe('Totals over all steps.'),
    current_step: z
      .object({
        index: Count.describe("The step's index (0-based)."),
        session_id: z.string().describe("The step's session."),
        started_at: z.string().describe('RFC 3339 start time.'),
      })
      .nullable()
      .describe('The step claimed and not yet accounted for (it resumes with the same session).'),
    last_session_id: z.string().nullable().describe("The newest step's session; null before any."),
    steps: z
      .array(LoopStepRecordSchema)
      .max(RECENT_LOOP_STEPS)
      .describe('The newest steps, oldest first.'),
    run: LoopRunSchema.optional(),
    schedule: LoopScheduleSchema.optional(),
  }),
)
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
export const LoopPointerSchema = lazySchema(() =>
  z.strictObject({
    format: z.literal('turnline.loop-pointer').describe('Always `turnline.loop-pointer`.'),
    version: z.literal(1).describe('Always `1`.'),
    loop_id: z.string().regex(LOOP_ID).describe('The loop id.'),
    workspace: z.string().min(1).describe('The workspace every step runs in.'),
    created_at: z.string(),
  }),
)
export type LoopPointer = z.infer<typeof LoopPointerSchema>

/**
 * `<prefix>/.turnline/pass-cursors/<schedules|loop-runs>/<tenant>.json`: where the sweep's last
 * pass stopped in a tenant's entries when it had more than one pass checks
 * (core/background/pass-budget.ts); replaced at every such pass.
 */
export const PassCursorSchema = lazySchema(() =>
  z.strictObject({
    format: z.literal('turnline.pass-cursor').describe('Always `turnline.pass-cursor`.'),
    version: z.literal(1).describe('Always `1`.'),
    after: z.string().regex(LOOP_ID).describe('The last loop id the pass took.'),
    at: z.string().describe('When that pass took it (RFC 3339).'),
  }),
)
export type PassCursor = z.infer<typeof PassCursorSchema>

/** `POST /v1/loops`. */
export const LoopCreateRequestSchema = lazySchema(() =>
  z.strictObject({
    loop_id: z
      .string()
      .regex(LOOP_ID, 'use 1–64 characters from A-Z a-z 0-9 _ -')
      .optional()
      .describe('Chosen by the scheduler (creating it twice is 409), else generated.'),
    task: z
      .string()
      .min(1)
      .max(100_000)
      .describe('What every step is asked to do (its first user message).'),
    session: SessionConfigSchema.default(SessionConfigSchema.parse({})).describe(
      "Settings of each step's session (its workspace is the loop's).",
    ),
    budget: CostBudgetSchema.default(CostBudgetSchema.parse({})).describe(
      "The loop's limits (VT Code CostBudget).",
    ),
    autorun: z
      .boolean()
      .optional()
      .describe(
        'Start a background run at once (POST /v1/loops/{id}/run): where the server runs a worker.',
      ),
    schedule: z
      .strictObject({ cron: CronSchema })
      .optional()
      .describe('Start a background run at every minute the cron expression (UTC) names.'),
  }),
)
export type LoopCreateRequest = z.infer<typeof LoopCreateRequestSchema>

/** `POST /v1/loops/:id/step`: run the next step, or change the loop's status or budget. */
export const LoopStepRequestSchema = lazySchema(() =>
  z.strictObject({
    input: z
      .string()
      .min(1)
      .max(100_000)
      .optional()
      .describe('Added to the task for this step only.'),
    control: z
      .enum(['pause', 'resume', 'complete', 'fail'])
      .optional()
      .describe('Instead of a step: pause, resume, complete or fail the loop.'),
    budget: CostBudgetSchema.partial()
      .optional()
      .describe('Raise or lower limits (with or without a control).'),
  }),
)
export type LoopStepRequest = z.infer<typeof LoopStepRequestSchema>

/** `POST /v1/loops/:id/run`: no fields (yet); an empty object or no body. */
export const LoopRunRequestSchema = lazySchema(() => z.strictObject({}))

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
