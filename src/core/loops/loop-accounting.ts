import type { BudgetReport } from '../../contract/budget-status.ts'
import type { LoopRunState, LoopStepRecord, LoopView } from '../../contract/loop-state.ts'
import { RECENT_LOOP_STEPS } from '../../contract/loop-state.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import { type BudgetUse, budgetReport } from '../guardrails/cost-budget.ts'
import { withoutSecrets } from '../mcp/mcp-servers.ts'

/**
 * The loop's arithmetic: its budget use (steps done, tokens, cost), the report, the limits a
 * step's session gets (what is left of the loop's budget, so one step cannot overrun it), and
 * folding a finished step into the state exactly once.
 */

export function loopUse(state: LoopRunState): BudgetUse {
  return {
    steps: state.step_index,
    tokens: state.cumulative.input_tokens + state.cumulative.output_tokens,
    costUsd: state.cumulative.total_cost_usd,
  }
}

export function loopReport(state: LoopRunState): BudgetReport {
  const { budget } = state
  return budgetReport(loopUse(state), {
    maxSteps: budget.max_steps,
    maxTokens: budget.max_tokens,
    maxCostUsd: budget.max_cost_usd,
  })
}

/** A loop as the API shows it: its step settings without their credentials (MCP headers). */
export function loopView(state: LoopRunState): LoopView {
  return { ...state, session: withoutSecrets(state.session), budget_report: loopReport(state) }
}

/** The step session's settings: the loop's, with limits no larger than what the loop has left. */
export function stepConfig(state: LoopRunState): SessionConfig {
  const use = loopUse(state)
  const tokensLeft = Math.max(1, state.budget.max_tokens - use.tokens)
  const costLeft = Math.max(1e-9, state.budget.max_cost_usd - (use.costUsd ?? 0))
  const limits = state.session.limits
  return {
    ...state.session,
    workspace: state.workspace,
    limits: {
      ...limits,
      max_tokens: Math.min(limits.max_tokens ?? tokensLeft, tokensLeft),
      max_budget_usd: Math.min(limits.max_budget_usd ?? costLeft, costLeft),
    },
  }
}

/**
 * Where a step's session can be read, relative to the workspace folder (`last_artifact_path`):
 * VT Code's `events.jsonl` on a store that appends (fs). A store that cannot append (S3) keeps
 * no `events.jsonl`: the events are create-only parts, which the session's `manifest.json`
 * lists (their lines from its `rolled_head_seq` on are what `events.jsonl` would hold, and a
 * step's session, completed, is rolled up to its end), so the manifest is named.
 */
export function stepArtifactPath(sessionId: string, store: { appends: boolean }): string {
  return `.vtcode/sessions/${sessionId}/${store.appends ? 'events.jsonl' : 'manifest.json'}`
}

/** The state after `record` (the claimed step) ended; unchanged if it was accounted already. */
export function accountStep(
  state: LoopRunState,
  record: LoopStepRecord,
  now: string,
  artifactPath: string,
): LoopRunState {
  if (state.current_step?.index !== record.index) return state
  const cumulative = {
    input_tokens: state.cumulative.input_tokens + record.input_tokens,
    output_tokens: state.cumulative.output_tokens + record.output_tokens,
    total_cost_usd: state.cumulative.total_cost_usd + (record.cost_usd ?? 0),
    cost_unknown: state.cumulative.cost_unknown || record.cost_usd === null,
  }
  const next: LoopRunState = {
    ...state,
    step_index: state.step_index + 1,
    cumulative,
    current_step: null,
    last_session_id: record.session_id,
    last_artifact_path: artifactPath,
    steps: [...state.steps, record].slice(-RECENT_LOOP_STEPS),
    updated_at: now,
  }
  const status = loopReport(next).status
  return {
    ...next,
    budget_status: status,
    status: status !== 'ok' && next.status === 'running' ? 'paused' : next.status,
  }
}
