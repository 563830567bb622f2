import type { EngineState } from '../../contract/engine-state.ts'
import type { ModelSettings } from '../../contract/session-config.ts'
import type { Usage } from '../../contract/usage.ts'
import type { ModelPrice } from './pricing.ts'
import { estimateCostUsd, priceFor } from './pricing.ts'

/** The session's price per token: its own override, else the built-in table; undefined = unknown. */
export function sessionPrice(model: ModelSettings): ModelPrice | undefined {
  return model.price ?? priceFor(model.name)
}

/** Adds one response's raw cost (VT Code raw_usd: no cache discount) when pricing is known. */
export function addCost(state: EngineState, usage: Usage, price: ModelPrice | undefined) {
  return price ? (state.cost_usd ?? 0) + estimateCostUsd(usage, price) : (state.cost_usd ?? null)
}

export type BudgetVerdict =
  | { status: 'ok' }
  | { status: 'exceeded'; spent: number; max: number }
  | { status: 'warning'; message: string }

/**
 * VT Code's BudgetStatus: exceeded when spent > max (strict), a one-time warning at
 * spent ≥ threshold × max. Without pricing the budget is not enforced (see pricingWarning).
 */
export function checkBudget(state: EngineState): BudgetVerdict {
  const max = state.config.limits.max_budget_usd
  const spent = state.cost_usd
  if (max === undefined || spent == null) return { status: 'ok' }
  if (spent > max) return { status: 'exceeded', spent, max }
  const threshold = state.config.limits.budget_warning_threshold
  if (!state.budget_warned && spent >= threshold * max) {
    return {
      status: 'warning',
      message:
        `Session cost $${spent.toFixed(4)} has reached ${Math.round((spent / max) * 100)}% ` +
        `of the $${max} budget.`,
    }
  }
  return { status: 'ok' }
}

export function pricingWarning(model: string): string {
  return `Budget enforcement disabled for model \`${model}\` because pricing metadata is unavailable`
}
