import type { BudgetReport, BudgetStatus } from '../../contract/budget-status.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import type { Completion } from '../engine/thread-completion.ts'
import {
  type BudgetLimits,
  type BudgetUse,
  budgetReport,
  budgetStatus,
  totalTokens,
} from './cost-budget.ts'

/**
 * A session's guardrails: steps are its turns (`limits.max_steps`), tokens its aggregate usage
 * (`limits.max_tokens`), cost its estimated spend (`limits.max_budget_usd`, strict as VT Code's
 * session budget). Model requests stay `limits.max_turns` (VT Code's num_turns). A reached
 * limit ends the thread with the matching VT Code subtype and outcome code where one exists.
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

/**
 * The limit that stops the next model request. Steps count turns: a turn past `max_steps`
 * stops before its first request (the turn that reached the limit was allowed to run).
 */
export function limitBeforeRequest(state: EngineState): TerminalLimit | undefined {
  const limits = sessionLimits(state)
  const use = sessionUse(state)
  // The current turn is allowed when it is within max_steps: steps used = turns before it.
  const status = budgetStatus({ ...use, steps: Math.max(0, use.steps - 1) }, limits)
  return status === 'ok' ? undefined : limitCompletion(status, state)
}

/** After a response: tokens or cost now over (the turn's tool calls still get their results). */
export function limitAfterResponse(state: EngineState): TerminalLimit | undefined {
  const status = budgetStatus(sessionUse(state), { ...sessionLimits(state), maxSteps: undefined })
  return status === 'ok' ? undefined : limitCompletion(status, state)
}
