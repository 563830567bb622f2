import type { EngineState, OpenTurn } from '../../contract/engine-state.ts'
import type { Completion } from '../engine/thread-completion.ts'
import { budgetStatus } from './cost-budget.ts'
import { limitCompletion, sessionLimits, sessionUse } from './session-budget.ts'

/**
 * Every limit of a turn, in one place: each is a stop condition that yields the outcome it maps
 * to, and the turn loop asks `reachedStop` at the two points of a model request (before it is
 * sent; after its response, whose tool calls still get their results first). The order is the
 * order they are checked in: the first reached decides.
 *
 * | limit | checked | outcome |
 * |---|---|---|
 * | `limits.max_turns` (model requests) | before | thread ends `error_max_turns` / `turn_limit_reached` |
 * | `limits.max_steps` (turns started) | before | thread ends `error_max_turns` / `turn_limit_reached` |
 * | `limits.max_tokens` (input + output) | before, after | thread ends `error_during_execution` / `token_limit_reached` |
 * | `limits.max_budget_usd` (estimated cost, strict) | before, after | thread ends `error_max_budget_usd` / `budget_limit_reached` |
 * | `harness.max_tool_loops` (tool rounds in one turn) | before | the turn fails, the session goes on |
 *
 * `harness.max_tool_calls` (server-run calls in one turn) is not a stop: past it the
 * model is offered no server tool and its calls are not run (tool-call-limit.ts).
 *
 * The wall-clock budget of an invocation is not a stop: a tool wait that would outlive it ends
 * the turn `waiting` (tools/, `invocationBudgetMs`), and the next call continues it; so does the
 * platform's bound on a request (Lambda's timeout: turn/invocation-deadline.ts).
 */
export type StopOutcome =
  | ({ kind: 'terminal'; message: string } & Completion)
  | { kind: 'failed'; message: string }

/** Before a model request is sent, or after its response was accounted. */
export type StopPoint = 'before_request' | 'after_response'

export interface StopCondition {
  /** The setting it enforces. */
  readonly limit: 'max_turns' | 'max_steps' | 'max_tokens' | 'max_budget_usd' | 'max_tool_loops'
  readonly checkedAt: readonly StopPoint[]
  reached(state: EngineState, open: OpenTurn): StopOutcome | undefined
}

const maxTurns: StopCondition = {
  limit: 'max_turns',
  checkedAt: ['before_request'],
  reached(state) {
    const max = state.config.limits.max_turns
    if (max === undefined || state.model_requests < max) return undefined
    return {
      kind: 'terminal',
      subtype: 'error_max_turns',
      outcomeCode: 'turn_limit_reached',
      message: `turn limit reached: ${state.model_requests} of ${max} model requests used`,
    }
  },
}

/** Steps count turns: the turn that reached `max_steps` was allowed to run, the next is not. */
const maxSteps: StopCondition = {
  limit: 'max_steps',
  checkedAt: ['before_request'],
  reached(state) {
    const { maxSteps: max } = sessionLimits(state)
    const before = Math.max(0, sessionUse(state).steps - 1)
    return budgetStatus({ steps: before, tokens: 0, costUsd: undefined }, { maxSteps: max }) ===
      'ok'
      ? undefined
      : terminal('step_limit_reached', state)
  },
}

const maxTokens: StopCondition = {
  limit: 'max_tokens',
  checkedAt: ['before_request', 'after_response'],
  reached(state) {
    const { maxTokens: max } = sessionLimits(state)
    const use = { ...sessionUse(state), steps: 0, costUsd: undefined }
    return budgetStatus(use, { maxTokens: max }) === 'ok'
      ? undefined
      : terminal('token_limit_reached', state)
  },
}

const maxBudgetUsd: StopCondition = {
  limit: 'max_budget_usd',
  checkedAt: ['before_request', 'after_response'],
  reached(state) {
    const { maxCostUsd, strictCost } = sessionLimits(state)
    const use = { ...sessionUse(state), steps: 0, tokens: 0 }
    return budgetStatus(use, { maxCostUsd, strictCost }) === 'ok'
      ? undefined
      : terminal('cost_limit_reached', state)
  },
}

const maxToolLoops: StopCondition = {
  limit: 'max_tool_loops',
  checkedAt: ['before_request'],
  reached(state, open) {
    if (open.tool_loops < state.config.harness.max_tool_loops) return undefined
    return {
      kind: 'failed',
      message: `tool loop limit reached: ${open.tool_loops} tool rounds in one turn`,
    }
  },
}

/** The stop conditions, in the order they are checked. */
export const STOP_CONDITIONS: readonly StopCondition[] = [
  maxTurns,
  maxSteps,
  maxTokens,
  maxBudgetUsd,
  maxToolLoops,
]

/** The first stop condition reached at `at`, as the outcome it maps to; undefined: go on. */
export function reachedStop(input: {
  state: EngineState
  open: OpenTurn
  at: StopPoint
}): StopOutcome | undefined {
  for (const condition of STOP_CONDITIONS) {
    if (!condition.checkedAt.includes(input.at)) continue
    const outcome = condition.reached(input.state, input.open)
    if (outcome) return outcome
  }
  return undefined
}

function terminal(status: Parameters<typeof limitCompletion>[0], state: EngineState): StopOutcome {
  const { budget: _budget, ...completion } = limitCompletion(status, state)
  return { kind: 'terminal', ...completion }
}

/**
 * The notices a response's accounting may raise about `max_budget_usd`, each once per session:
 * the budget cannot be enforced (no pricing for the model), or its warning threshold was
 * reached. `priced` says whether the response's cost could be estimated.
 */
export function budgetNotices(
  state: EngineState,
  model: { name: string; priced: boolean },
): { notices: string[]; pricingWarned: boolean; budgetWarned: boolean } {
  const { max_budget_usd: max, budget_warning_threshold: threshold } = state.config.limits
  const notices: string[] = []
  let pricingWarned = state.pricing_warned
  let budgetWarned = state.budget_warned
  if (!model.priced && max !== undefined && !pricingWarned) {
    pricingWarned = true
    notices.push(
      `Budget enforcement disabled for model \`${model.name}\` because pricing metadata is unavailable`,
    )
  }
  const spent = state.cost_usd
  if (max !== undefined && spent != null && spent <= max && !budgetWarned) {
    if (spent >= threshold * max) {
      budgetWarned = true
      notices.push(
        `Session cost $${spent.toFixed(4)} has reached ${Math.round((spent / max) * 100)}% ` +
          `of the $${max} budget.`,
      )
    }
  }
  return { notices, pricingWarned, budgetWarned }
}
