import type { BudgetReport, BudgetStatus } from '../../contract/budget-status.ts'
import type { Usage } from '../../contract/usage.ts'

/**
 * BudgetStatus as VT Code's CostBudget checked it: steps first (used ≥ max), then tokens
 * (input + output ≥ max), then cost. A loop's cost limit is reached at spent ≥ max (CostBudget);
 * a session's at spent > max (VT Code's session budget, `max_budget_usd`). Unknown cost is never
 * over budget.
 */

export interface BudgetUse {
  steps: number
  tokens: number
  /** Undefined when pricing is unknown. */
  costUsd: number | undefined
}

export interface BudgetLimits {
  maxSteps?: number | undefined
  maxTokens?: number | undefined
  maxCostUsd?: number | undefined
  /** Cost is over only when strictly above the max (sessions). */
  strictCost?: boolean
}

export function totalTokens(usage: Pick<Usage, 'input_tokens' | 'output_tokens'>): number {
  return usage.input_tokens + usage.output_tokens
}

export function budgetStatus(use: BudgetUse, limits: BudgetLimits): BudgetStatus {
  if (limits.maxSteps !== undefined && use.steps >= limits.maxSteps) return 'step_limit_reached'
  if (limits.maxTokens !== undefined && use.tokens >= limits.maxTokens) return 'token_limit_reached'
  if (limits.maxCostUsd !== undefined && use.costUsd !== undefined) {
    const over = limits.strictCost
      ? use.costUsd > limits.maxCostUsd
      : use.costUsd >= limits.maxCostUsd
    if (over) return 'cost_limit_reached'
  }
  return 'ok'
}

export function budgetReport(use: BudgetUse, limits: BudgetLimits): BudgetReport {
  return {
    status: budgetStatus(use, limits),
    steps: { used: use.steps, ...(limits.maxSteps !== undefined ? { max: limits.maxSteps } : {}) },
    tokens: {
      used: use.tokens,
      ...(limits.maxTokens !== undefined ? { max: limits.maxTokens } : {}),
    },
    cost_usd: {
      ...(use.costUsd !== undefined ? { spent: use.costUsd } : {}),
      ...(limits.maxCostUsd !== undefined ? { max: limits.maxCostUsd } : {}),
    },
  }
}
