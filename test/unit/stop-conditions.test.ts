import { describe, expect, it } from 'vitest'
import type { EngineState, OpenTurn } from '../../src/contract/engine-state.ts'
import type { Limits } from '../../src/contract/limits-config.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import {
  budgetNotices,
  reachedStop,
  STOP_CONDITIONS,
} from '../../src/core/guardrails/stop-conditions.ts'
import { freshEngineState } from '../support/fresh-engine-state.ts'

function stateWith(
  limits: Partial<Limits>,
  use: Partial<Pick<EngineState, 'model_requests' | 'turn_counter' | 'cost_usd'>> & {
    tokens?: number
  } = {},
): EngineState {
  const { tokens = 0, ...counters } = use
  return freshEngineState(
    { limits, harness: { max_tool_loops: 3 } },
    { usage: { ...ZERO_USAGE, input_tokens: tokens }, turn_counter: 1, ...counters },
  )
}

const open = (toolLoops = 0): OpenTurn => ({
  turn_id: 'turn-1',
  pending_calls: [],
  tools_running: false,
  usage: { ...ZERO_USAGE },
  tool_loops: toolLoops,
})

describe('stop conditions', () => {
  it('lists every limit once, in the order they are checked', () => {
    expect(STOP_CONDITIONS.map((c) => c.limit)).toEqual([
      'max_turns',
      'max_steps',
      'max_tokens',
      'max_budget_usd',
      'max_tool_loops',
    ])
  })

  it('goes on while nothing is reached', () => {
    const state = stateWith({ max_turns: 2, max_steps: 2, max_tokens: 100, max_budget_usd: 1 })
    expect(reachedStop({ state, open: open(), at: 'before_request' })).toBeUndefined()
    expect(reachedStop({ state, open: open(), at: 'after_response' })).toBeUndefined()
  })

  it('yields the outcome each limit maps to', () => {
    const at = 'before_request' as const
    expect(
      reachedStop({ state: stateWith({ max_turns: 2 }, { model_requests: 2 }), open: open(), at }),
    ).toEqual({
      kind: 'terminal',
      subtype: 'error_max_turns',
      outcomeCode: 'turn_limit_reached',
      message: 'turn limit reached: 2 of 2 model requests used',
    })
    expect(
      reachedStop({ state: stateWith({ max_steps: 2 }, { turn_counter: 3 }), open: open(), at }),
    ).toMatchObject({ subtype: 'error_max_turns', outcomeCode: 'turn_limit_reached' })
    expect(
      reachedStop({ state: stateWith({ max_tokens: 50 }, { tokens: 50 }), open: open(), at }),
    ).toMatchObject({ subtype: 'error_during_execution', outcomeCode: 'token_limit_reached' })
    expect(
      reachedStop({
        state: stateWith({ max_budget_usd: 1 }, { cost_usd: 1.01 }),
        open: open(),
        at,
      }),
    ).toMatchObject({ subtype: 'error_max_budget_usd', outcomeCode: 'budget_limit_reached' })
    expect(reachedStop({ state: stateWith({}), open: open(3), at })).toEqual({
      kind: 'failed',
      message: 'tool loop limit reached: 3 tool rounds in one turn',
    })
  })

  it('lets the turn that reached max_steps run, and a budget exactly spent is not over', () => {
    const at = 'before_request' as const
    const steps = stateWith({ max_steps: 2 }, { turn_counter: 2 })
    expect(reachedStop({ state: steps, open: open(), at })).toBeUndefined()
    const spent = stateWith({ max_budget_usd: 1 }, { cost_usd: 1 })
    expect(reachedStop({ state: spent, open: open(), at })).toBeUndefined()
  })

  it('checks after a response only what a response can change: tokens and cost', () => {
    const at = 'after_response' as const
    const everything = stateWith(
      { max_turns: 1, max_steps: 1, max_tokens: 10 },
      { model_requests: 5, turn_counter: 5, tokens: 10 },
    )
    expect(reachedStop({ state: everything, open: open(9), at })).toMatchObject({
      outcomeCode: 'token_limit_reached',
    })
    const turns = stateWith({ max_turns: 1 }, { model_requests: 5 })
    expect(reachedStop({ state: turns, open: open(9), at })).toBeUndefined()
  })

  it('the first reached decides: max_turns before the guardrails', () => {
    const state = stateWith({ max_turns: 1, max_budget_usd: 1 }, { model_requests: 1, cost_usd: 5 })
    expect(reachedStop({ state, open: open(), at: 'before_request' })).toMatchObject({
      outcomeCode: 'turn_limit_reached',
    })
  })

  it('notices, once each, an unpriced model under a budget and a budget near its end', () => {
    const unpriced = budgetNotices(stateWith({ max_budget_usd: 1 }), { name: 'm', priced: false })
    expect(unpriced).toEqual({
      notices: [expect.stringContaining('Budget enforcement disabled for model `m`')],
      pricingWarned: true,
      budgetWarned: false,
    })
    const near = stateWith({ max_budget_usd: 1 }, { cost_usd: 0.8 })
    expect(budgetNotices(near, { name: 'm', priced: true }).notices).toEqual([
      'Session cost $0.8000 has reached 80% of the $1 budget.',
    ])
    const warned = { ...near, budget_warned: true }
    expect(budgetNotices(warned, { name: 'm', priced: true }).notices).toEqual([])
    const over = stateWith({ max_budget_usd: 1 }, { cost_usd: 1.5 })
    expect(budgetNotices(over, { name: 'm', priced: true }).notices).toEqual([])
  })
})
