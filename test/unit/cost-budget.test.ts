import { describe, expect, it } from 'vitest'
import { CostBudgetSchema } from '../../src/contract/budget-status.ts'
import { budgetReport, budgetStatus } from '../../src/core/guardrails/cost-budget.ts'

describe('BudgetStatus', () => {
  const limits = { maxSteps: 3, maxTokens: 100, maxCostUsd: 1 }

  it('checks steps first, then tokens, then cost (VT Code CostBudget order)', () => {
    expect(budgetStatus({ steps: 3, tokens: 500, costUsd: 9 }, limits)).toBe('step_limit_reached')
    expect(budgetStatus({ steps: 2, tokens: 100, costUsd: 9 }, limits)).toBe('token_limit_reached')
    expect(budgetStatus({ steps: 2, tokens: 99, costUsd: 1 }, limits)).toBe('cost_limit_reached')
    expect(budgetStatus({ steps: 2, tokens: 99, costUsd: 0.99 }, limits)).toBe('ok')
  })

  it('reaches a session cost limit only above the max, and never with unknown pricing', () => {
    const session = { ...limits, strictCost: true }
    expect(budgetStatus({ steps: 0, tokens: 0, costUsd: 1 }, session)).toBe('ok')
    expect(budgetStatus({ steps: 0, tokens: 0, costUsd: 1.0001 }, session)).toBe(
      'cost_limit_reached',
    )
    expect(budgetStatus({ steps: 0, tokens: 0, costUsd: undefined }, session)).toBe('ok')
  })

  it('reports use against limits, leaving out what is not set or not known', () => {
    expect(budgetReport({ steps: 1, tokens: 5, costUsd: undefined }, { maxTokens: 10 })).toEqual({
      status: 'ok',
      steps: { used: 1 },
      tokens: { used: 5, max: 10 },
      cost_usd: {},
    })
  })

  it("defaults a loop's budget to VT Code's CostBudget defaults", () => {
    expect(CostBudgetSchema.parse({})).toEqual({
      max_tokens: 1_000_000,
      max_cost_usd: 10,
      max_steps: 50,
    })
  })
})
