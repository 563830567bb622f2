import type { JsonValue } from '../../contract/json-value.ts'
import type { ThreadItem, ToolOutputItem } from '../../contract/thread-item.ts'
import type { ExtensionOutputItem, ItemStatus, OutputItem, OutputTextPart } from './types.ts'

/**
 * VT Code ThreadItem → Open Responses output item (reference §9): agent_message → message,
 * reasoning → reasoning, tool_invocation and mcp_tool_call → function_call, tool_output →
 * function_call_output, everything else → a `vtcode:*` extension item.
 */

/** The text a streamed item accumulates: message and reasoning text, tool output. */
export function streamedText(item: ThreadItem): string | undefined {
  switch (item.type) {
    case 'agent_message':
    case 'reasoning':
      return item.text
    case 'tool_output':
      return toolOutputText(item)
    default:
      return undefined
  }
}

/** The output, or where it was spooled when the inline output is empty. */
export function toolOutputText(item: ToolOutputItem): string {
  if (item.output !== '') return item.output
  return item.spool_path === undefined ? '' : `Output saved to ${item.spool_path}`
}

/** Status of an item at `item.completed`: a failed VT Code item ends `incomplete`. */
export function completedStatus(item: ThreadItem): ItemStatus {
  switch (item.type) {
    case 'command_execution':
    case 'tool_invocation':
    case 'tool_output':
    case 'file_change':
    case 'mcp_tool_call':
      return item.status === 'failed' ? 'incomplete' : 'completed'
    default:
      return 'completed'
  }
}

export function textPart(text: string): OutputTextPart {
  return { type: 'output_text', text, annotations: [] }
}

/** Function-call arguments as JSON text; a raw (still unparsable) string is kept as it is. */
export function argumentsText(value: JsonValue | undefined): string {
  if (value === undefined) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** Drops absent (undefined) fields, so optional VT Code fields stay omitted. */
function present(fields: { [key: string]: JsonValue | undefined }): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {}
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value
  return out
}

function extension(
  type: ExtensionOutputItem['type'],
  id: string,
  status: ItemStatus,
  fields: { [key: string]: JsonValue | undefined },
): ExtensionOutputItem {
  return { type, id, status, ...present(fields) }
}

/**
 * Maps one item. `text` is the content to show (the delta-tracked text for streamed items);
 * `callId` resolves the Open Responses call id of a function call (by invocation item id).
 */
export function toOutputItem(
  item: ThreadItem,
  status: ItemStatus,
  callId: (invocationItemId: string, rawCallId: string | undefined) => string,
): OutputItem {
  switch (item.type) {
    case 'agent_message':
      return {
        type: 'message',
        id: item.id,
        status,
        role: 'assistant',
        content: [textPart(item.text)],
      }
    case 'reasoning':
      return {
        type: 'reasoning',
        id: item.id,
        status,
        summary: [],
        content: [{ type: 'reasoning_text', text: item.text }],
      }
    case 'tool_invocation':
    case 'mcp_tool_call':
      return {
        type: 'function_call',
        id: item.id,
        status,
        call_id: callId(item.id, item.type === 'tool_invocation' ? item.tool_call_id : undefined),
        name: item.tool_name,
        arguments: argumentsText(item.arguments),
      }
    case 'tool_output':
      return {
        type: 'function_call_output',
        id: item.id,
        status,
        call_id: callId(item.call_id, item.tool_call_id),
        output: toolOutputText(item),
      }
    case 'plan':
      return extension('vtcode:plan', item.id, status, { text: item.text })
    case 'command_execution':
      return extension('vtcode:command_execution', item.id, status, {
        command: item.command,
        arguments: item.arguments,
        aggregated_output: item.aggregated_output,
        exit_code: item.exit_code,
      })
    case 'file_change':
      return extension('vtcode:file_change', item.id, status, {
        changes: item.changes.map((change) => ({ path: change.path, kind: change.kind })),
      })
    case 'web_search':
      return extension('vtcode:web_search', item.id, status, {
        query: item.query,
        provider: item.provider,
        results: item.results,
      })
    case 'harness':
      return extension('vtcode:harness_event', item.id, status, {
        event: item.event,
        message: item.message,
        command: item.command,
        path: item.path,
        exit_code: item.exit_code,
        attempt: item.attempt,
        error_category: item.error_category,
        duration_ms: item.duration_ms,
      })
    case 'error':
      return extension('vtcode:error', item.id, status, { message: item.message })
  }
}
