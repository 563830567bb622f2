import * as z from 'zod'
import { BudgetReportSchema } from './budget-report.ts'
import { lazySchema } from './lazy-schema.ts'
import { LoopRunStateSchema, LoopStepRecordSchema } from './loop-state.ts'

/** The answers of the loop routes (docs/agent-layer.md; notes: `response-fields.ts`). */

export const LoopViewSchema = lazySchema(() =>
  LoopRunStateSchema.extend({
    budget_report: BudgetReportSchema.describe('The loop against its budget.'),
  }).meta({
    id: 'LoopView',
    description: 'A loop as the API shows it: its state and budget report.',
  }),
)

export const LoopStepResponseSchema = lazySchema(() =>
  z
    .object({
      loop: LoopViewSchema.describe('The loop after the call.'),
      step: LoopStepRecordSchema.optional().describe(
        'The step that ran (absent for a control, or when the budget stopped the loop first).',
      ),
      waiting: z
        .object({
          session_id: z.string().describe("The step's session."),
          status: z.string().describe('Why it waits (`waiting` or `awaiting_approval`).'),
          warnings: z
            .array(z.string())
            .optional()
            .describe(
              "The turn's warnings: `paused: …` when it stopped before the platform's timeout (Lambda); the next step call continues it.",
            ),
        })
        .optional()
        .describe(
          "A step whose session waits (a command still runs, a tool call needs approval, or its turn paused before the platform's timeout).",
        ),
    })
    .meta({ id: 'LoopStepResponse', description: 'The outcome of one loop step call.' }),
)
