import * as z from 'zod'
import { BUDGET_STATUSES } from './budget-status.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * Where a session or a loop stands against its budget, as `GET /v1/sessions/{id}` and the loop
 * routes answer it (notes: `response-fields.ts`).
 */

const LimitMax = lazySchema(() =>
  z.number().nonnegative().optional().describe('The limit; absent when none is set.'),
)
const Limit = (what: string) =>
  z
    .object({ used: z.number().nonnegative().describe(`${what} so far.`), max: LimitMax })
    .describe(`${what} against its limit.`)

export const BudgetReportSchema = lazySchema(() =>
  z
    .object({
      status: z.enum(BUDGET_STATUSES).describe('The first limit reached, or `ok`.'),
      steps: Limit('Steps (turns)'),
      tokens: Limit('Tokens (input + output)'),
      cost_usd: z
        .object({
          spent: z
            .number()
            .nonnegative()
            .optional()
            .describe(
              'Cost in US dollars so far (absent when unknown, e.g. no pricing for the model).',
            ),
          max: LimitMax,
        })
        .describe('Cost in US dollars against its limit.'),
    })
    .meta({
      id: 'BudgetReport',
      description: 'Where a session or loop stands against its budget.',
    }),
)
