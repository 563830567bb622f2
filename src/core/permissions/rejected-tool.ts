import type { PendingCall } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { toolCallEnding } from '../tools/tool-call-ending.ts'

/** Tool outcomes of a call that was never run because someone said no. */
export type RejectionOutcome =
  | 'permission_rejected'
  | 'permission_cancelled'
  | 'hook_denied'
  | 'followup'

export interface RejectedTool {
  call: PendingCall
  outcome: RejectionOutcome
  /** Why, shown in the tool_output item, the error item and the model's tool message. */
  detail: string
  /** Id of the error item (`item_<n>` from the engine's counter); unused for `followup`. */
  errorItemId: string
}

/** The detail text for a rejection; `reason` is the policy's, the hook's or the user's words. */
export function rejectionDetail(
  outcome: RejectionOutcome,
  toolName: string,
  reason?: string,
): string {
  const why = reason?.trim() ? `: ${reason.trim()}` : ''
  switch (outcome) {
    case 'permission_rejected':
      return `Permission denied for tool ${toolName}${why}. The tool was not run.`
    case 'permission_cancelled':
      return `The permission request for tool ${toolName} was cancelled${why}. The tool was not run.`
    case 'hook_denied':
      return `Tool ${toolName} was blocked by a pre_tool_use hook${why}. The tool was not run.`
    case 'followup':
      return `The user answered with a follow-up instead of approving tool ${toolName}. The tool was not run.`
  }
}

/**
 * VT Code's events for a rejected tool call: the invocation completes `failed` with the
 * rejection outcome, its `<id>:output` item starts empty and completes `failed` with the detail,
 * then an `error` item carries the detail (not for `followup`, which is an answer, not an error).
 */
export function rejectedToolEvents(rejected: RejectedTool): ThreadEvent[] {
  const { call, outcome, detail } = rejected
  const ending = toolCallEnding(call, 'failed', outcome)
  const events: ThreadEvent[] = [
    ...ending.events,
    { type: 'item.completed', item: { ...ending.output, output: detail, status: 'failed' } },
  ]
  if (outcome !== 'followup') {
    events.push({
      type: 'item.completed',
      item: { id: rejected.errorItemId, type: 'error', message: detail },
    })
  }
  return events
}

/** The tool message the model gets for a rejected call (every call id needs an answer). */
export function rejectionToolMessage(call: PendingCall, detail: string): HistoryMessage {
  return { role: 'tool', tool_call_id: call.tool_call_id, content: detail }
}
