import type { BudgetReport, BudgetStatus } from '../../contract/budget-status.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import type { Completion } from '../engine/thread-completion.ts'
import { type BudgetLimits, type BudgetUse, budgetReport, totalTokens } from './cost-budget.ts'

/**
 * A session's guardrails: steps are its turns (`limits.max_steps`), tokens its aggregate usage
 * (`limits.max_tokens`), cost its estimated spend (`limits.max_budget_usd`, strict as VT Code's
 * session budget). Model requests stay `limits.max_turns` (VT Code's num_turns). A reached
 * limit ends the thread with the matching VT Code subtype and outcome code where one exists;
 * when each is checked is decided in one place, `stop-conditions.ts`.
 */

export function sessionUse(state: EngineState): BudgetUse {
  return {
    steps: state.turn_counter,
    tokens: totalTokens(state.usage),
    costUsd: state.cost_usd ?? undefined,
  }
}

export function sessionLimits(state: EngineState): BudgetLimits {
  const limits = state.config.limits
  return {
    maxSteps: limits.max_steps,
    maxTokens: limits.max_tokens,
    maxCostUsd: limits.max_budget_usd,
    strictCost: true,
  }
}

export function sessionBudget(state: EngineState): BudgetReport {
  return budgetReport(sessionUse(state), sessionLimits(state))
}

export type TerminalLimit = Completion & { message: string; budget: Exclude<BudgetStatus, 'ok'> }

/** VT Code's subtype and outcome code for each reached limit (tokens have none: ours). */
export function limitCompletion(
  status: Exclude<BudgetStatus, 'ok'>,
  state: EngineState,
): TerminalLimit {
  const limits = state.config.limits
  const use = sessionUse(state)
  switch (status) {
    case 'step_limit_reached':
      return {
        subtype: 'error_max_turns',
        outcomeCode: 'turn_limit_reached',
        budget: status,
        message: `step limit reached: turn ${use.steps} of ${limits.max_steps} allowed`,
      }
    case 'token_limit_reached':
      return {
        subtype: 'error_during_execution',
        outcomeCode: 'token_limit_reached',
        budget: status,
        message: `token limit reached: ${use.tokens} of ${limits.max_tokens} tokens used`,
      }
    case 'cost_limit_reached':
      return {
        subtype: 'error_max_budget_usd',
        outcomeCode: 'budget_limit_reached',
        budget: status,
        message: `budget limit reached: spent $${(use.costUsd ?? 0).toFixed(4)} of $${limits.max_budget_usd}`,
      }
  }
}
