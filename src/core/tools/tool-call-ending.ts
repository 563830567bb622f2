import type { PendingCall } from '../../contract/engine-state.ts'
import type { ToolOutcome } from '../../contract/enums.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { parseLoose } from '../model/model-step.ts'

/** The fields of a call's `<id>:output` item that each of its events repeats. */
export interface ToolOutputFields {
  id: string
  type: 'tool_output'
  call_id: string
  tool_call_id: string
}

/**
 * How VT Code's events for the end of a tool call begin, whether it ran (tool-result.ts) or was
 * refused (rejected-tool.ts): the invocation item completes with its status and outcome, then
 * the call's `<id>:output` item starts empty. The caller completes that item (`output`'s fields,
 * its text and status).
 */
export function toolCallEnding(
  call: PendingCall,
  status: 'completed' | 'failed',
  outcome: ToolOutcome,
): { events: [ThreadEvent, ThreadEvent]; output: ToolOutputFields } {
  const output: ToolOutputFields = {
    id: `${call.item_id}:output`,
    type: 'tool_output',
    call_id: call.item_id,
    tool_call_id: call.tool_call_id,
  }
  const invocation: ThreadEvent = {
    type: 'item.completed',
    item: {
      id: call.item_id,
      type: 'tool_invocation',
      tool_name: call.tool_name,
      arguments: parseLoose(call.arguments),
      tool_call_id: call.tool_call_id,
      status,
      outcome,
    },
  }
  const started: ThreadEvent = {
    type: 'item.started',
    item: { ...output, output: '', status: 'in_progress' },
  }
  return { events: [invocation, started], output }
}
