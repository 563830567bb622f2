import type { EngineState } from '../../contract/engine-state.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'

/** VT Code ThreadCompletionSubtype values we produce, with their outcome codes. */
export type Completion =
  | { subtype: 'success'; outcomeCode: 'success' }
  | { subtype: 'error_max_turns'; outcomeCode: 'turn_limit_reached' }
  | { subtype: 'error_max_budget_usd'; outcomeCode: 'budget_limit_reached' }
  | {
      subtype: 'error_during_execution'
      /** `handed_off` is VT Code's HandedOff; `token_limit_reached` is ours (no VT Code code). */
      outcomeCode:
        | 'failed'
        | 'error'
        | 'tool_loop_limit_reached'
        | 'handed_off'
        | 'token_limit_reached'
    }
  | { subtype: 'cancelled'; outcomeCode: 'cancelled' }

/**
 * The terminal event: aggregate usage, cost when pricing is known, num_turns = model requests,
 * `result` only on success, `stop_reason` = provider stop reason, or the error text on failures.
 */
export function threadCompletedEvent(
  threadId: string,
  sessionId: string,
  state: EngineState,
  completion: Completion,
  stopReason?: string,
): ThreadEvent {
  const success = completion.subtype === 'success'
  const reason = stopReason ?? state.last_stop_reason
  return {
    type: 'thread.completed',
    thread_id: threadId,
    session_id: sessionId,
    subtype: completion.subtype,
    outcome_code: completion.outcomeCode,
    ...(success ? { result: state.last_assistant_text ?? '' } : {}),
    ...(reason ? { stop_reason: reason } : {}),
    usage: state.usage,
    ...(state.cost_usd != null ? { total_cost_usd: state.cost_usd } : {}),
    num_turns: state.model_requests,
  }
}
