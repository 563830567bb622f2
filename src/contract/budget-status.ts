import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * Cost guardrails (VT Code's `CostBudget` / `BudgetStatus` of loop engineering): token, cost and
 * step budgets, per session (`limits.max_tokens`, `limits.max_budget_usd`, `limits.max_steps`)
 * and per loop (`budget`), reported as a BudgetStatus.
 */
export const BUDGET_STATUSES = [
  'ok',
  'token_limit_reached',
  'cost_limit_reached',
  'step_limit_reached',
] as const
export const BudgetStatusSchema = lazySchema(() => z.enum(BUDGET_STATUSES))
export type BudgetStatus = z.infer<typeof BudgetStatusSchema>

/** VT Code's CostBudget defaults (1,000,000 tokens, $10, 50 steps): a loop's budget when none is given. */
export const DEFAULT_LOOP_BUDGET = { max_tokens: 1_000_000, max_cost_usd: 10, max_steps: 50 }

export const CostBudgetSchema = lazySchema(() =>
  z.strictObject({
    max_tokens: z
      .number()
      .int()
      .positive()
      .max(1e12)
      .default(DEFAULT_LOOP_BUDGET.max_tokens)
      .describe('Total tokens (input + output).'),
    max_cost_usd: z
      .number()
      .positive()
      .max(1e6)
      .default(DEFAULT_LOOP_BUDGET.max_cost_usd)
      .describe('Cost limit in US dollars (default 10).'),
    max_steps: z
      .number()
      .int()
      .positive()
      .max(100_000)
      .default(DEFAULT_LOOP_BUDGET.max_steps)
      .describe('Step limit (default 50).'),
  }),
)
export type CostBudget = z.infer<typeof CostBudgetSchema>
export type CostBudgetInput = z.input<typeof CostBudgetSchema>

/** Where a session or loop stands against its budget. */
export interface BudgetReport {
  status: BudgetStatus
  steps: { used: number; max?: number }
  tokens: { used: number; max?: number }
  /** `spent` is absent when the model's pricing is unknown (the cost is then not enforced). */
  cost_usd: { spent?: number; max?: number }
}
