import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ContextResetEvent } from '../../contract/thread-lifecycle-events.ts'

/**
 * The plan-approval context reset (`fresh_context`, "clear context and implement"): VT Code
 * keeps the approved plan, task tracker, working tree, configuration, permissions,
 * authentication and aggregate usage, and clears only the live transcript and transient
 * continuation, recovery, cache-lineage, request-segment and tool-budget state; then a normal
 * build turn starts with a compact handoff directive (handoff-prompt.ts) and `context.reset` is
 * emitted.
 */

/** `previous_context_usage_percent`: tokens×100/max, floored, clamped to 0–100 (0 if max ≤ 0). */
export function contextUsagePercent(contextTokens: number, maxContextTokens: number): number {
  if (!(maxContextTokens > 0) || !(contextTokens > 0)) return 0
  return Math.min(100, Math.floor((contextTokens * 100) / maxContextTokens))
}

export interface ContextResetInput {
  threadId: string
  /** The turn that starts from the fresh context. */
  turnId: string
  /** Context size before the reset: the last model request's `input_tokens` (prompt size). */
  contextTokens: number
  /** `harness.max_context_tokens`. */
  maxContextTokens: number
}

export function contextResetEvent(input: ContextResetInput): ContextResetEvent {
  return {
    type: 'context.reset',
    thread_id: input.threadId,
    turn_id: input.turnId,
    trigger: 'plan_approval',
    plan_preserved: true,
    previous_context_usage_percent: contextUsagePercent(
      input.contextTokens,
      input.maxContextTokens,
    ),
    tool_budget_reset: true,
  }
}

/**
 * The session state the reset acts on. The engine maps its own state onto these fields; any
 * field not named here is kept as it is.
 */
export interface FreshContextState {
  // — preserved —
  /** The approved plan (markdown). */
  plan: string | null
  task_tracker: string | null
  /** Configuration, permissions and credentials references live here; never touched. */
  config: unknown
  /** Aggregate usage, cost and model requests of the session. */
  usage: unknown
  cost_usd: number | null
  model_requests: number
  /** Applied steering-intent window: a reset must not replay follow-ups. */
  applied_intents: string[]
  item_counter: number
  turn_counter: number
  // — cleared —
  /** The live transcript of the current request segment. */
  history: HistoryMessage[]
  /** Tool rounds used in the current turn (the tool budget). */
  tool_loops: number
  /** Continuation/recovery bookkeeping (e.g. retry directives, blocked handoff notes). */
  continuation: string | null
  recovery_attempts: number
  /** Cache lineage: provider response chain (e.g. `previous_response_id`). */
  response_chain: string | null
  /** Request segment: id and frozen prefix/catalog hashes. */
  segment_id: string | null
  prefix_hash: string | null
  catalog_hash: string | null
  compaction_pending: boolean
}

export const PRESERVED_ON_FRESH_CONTEXT = [
  'plan',
  'task_tracker',
  'config',
  'usage',
  'cost_usd',
  'model_requests',
  'applied_intents',
  'item_counter',
  'turn_counter',
] as const satisfies readonly (keyof FreshContextState)[]

export const CLEARED_ON_FRESH_CONTEXT = [
  'history',
  'tool_loops',
  'continuation',
  'recovery_attempts',
  'response_chain',
  'segment_id',
  'prefix_hash',
  'catalog_hash',
  'compaction_pending',
] as const satisfies readonly (keyof FreshContextState)[]

/**
 * The state after the reset: transient fields cleared, the transcript replaced by the handoff
 * directive alone (commit it with `history.reset: true`), everything else untouched.
 */
export function applyFreshContext<T extends FreshContextState>(
  state: T,
  directive: HistoryMessage,
): T {
  return {
    ...state,
    history: [directive],
    tool_loops: 0,
    continuation: null,
    recovery_attempts: 0,
    response_chain: null,
    segment_id: null,
    prefix_hash: null,
    catalog_hash: null,
    compaction_pending: false,
  }
}
