import type { JsonValue } from '../../contract/json-value.ts'
import type { ThreadItem, ToolOutputItem } from '../../contract/thread-item.ts'
import type {
  ExtensionItemStatus,
  ExtensionOutputItem,
  OutputItem,
  OutputTextPart,
  ReasoningOutputItem,
} from './types.ts'

/**
 * VT Code ThreadItem → Open Responses output item. agent_message → `message`, reasoning →
 * `reasoning`; everything else becomes a `vtcode:*` item laid out as VT Code's custom items
 * (`{type, id, status, data}`, absent fields null). Tool calls are `vtcode:tool_call` and
 * `vtcode:tool_output`, not `function_call`: Turnline runs its tools itself, and a
 * `function_call` item tells an Open Responses client to run the function and send the result
 * back (the AI SDK ends such a stream with finish reason `tool-calls`).
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

/** Status of a `vtcode:*` item at `item.completed` (VT Code: failed stays failed). */
export function completedStatus(item: ThreadItem): ExtensionItemStatus {
  switch (item.type) {
    case 'command_execution':
    case 'tool_invocation':
    case 'tool_output':
    case 'file_change':
      return item.status
    case 'mcp_tool_call':
      return item.status === undefined || item.status === 'started' ? 'in_progress' : item.status
    case 'error':
      return 'failed'
    default:
      return 'completed'
  }
}

export function textPart(text: string): OutputTextPart {
  return { type: 'output_text', text, annotations: [], logprobs: [] }
}

/** The reasoning item: its text as the summary (what is streamed) and as reasoning content. */
export function reasoningItem(
  id: string,
  status: ReasoningOutputItem['status'],
  text: string,
): ReasoningOutputItem {
  return {
    type: 'reasoning',
    id,
    status,
    summary: text === '' ? [] : [{ type: 'summary_text', text }],
    content: text === '' ? [] : [{ type: 'reasoning_text', text }],
  }
}

function extension(
  type: ExtensionOutputItem['type'],
  id: string,
  status: ExtensionItemStatus,
  fields: { [key: string]: JsonValue | undefined },
): ExtensionOutputItem {
  const data: { [key: string]: JsonValue } = {}
  for (const [key, value] of Object.entries(fields)) data[key] = value ?? null
  return { type, id, status, data }
}

/**
 * Maps one item. `status` is the item's status for a `vtcode:*` item (in_progress while it is
 * open); messages and reasoning are `in_progress` until done, then `completed`. `callId`
 * resolves the model's call id of a tool call (by invocation item id).
 * Long: one switch over the item types, a case each.
 */
export function toOutputItem(
  item: ThreadItem,
  status: ExtensionItemStatus,
  callId: (invocationItemId: string, rawCallId: string | undefined) => string,
): OutputItem {
  const open = status === 'in_progress' ? 'in_progress' : 'completed'
  switch (item.type) {
    case 'agent_message':
      return {
        type: 'message',
        id: item.id,
        status: open,
        role: 'assistant',
        content: [textPart(item.text)],
      }
    case 'reasoning':
      return reasoningItem(item.id, open, item.text)
    case 'tool_invocation':
      return extension('vtcode:tool_call', item.id, status, {
        call_id: callId(item.id, item.tool_call_id),
        name: item.tool_name,
        arguments: item.arguments,
      })
    case 'tool_output':
      return extension('vtcode:tool_output', item.id, status, {
        call_id: callId(item.call_id, item.tool_call_id),
        output: toolOutputText(item),
        exit_code: item.exit_code,
      })
    case 'mcp_tool_call':
      return extension('vtcode:mcp_tool_call', item.id, status, {
        name: item.tool_name,
        arguments: item.arguments,
        result: item.result,
      })
    case 'plan':
      return extension('vtcode:plan', item.id, status, { text: item.text })
    case 'command_execution':
      return extension('vtcode:command_execution', item.id, status, {
        command: item.command,
        arguments: item.arguments,
        aggregated_output: item.aggregated_output,
        exit_code: item.exit_code,
        status: item.status,
      })
    case 'file_change':
      return extension('vtcode:file_change', item.id, status, {
        changes: item.changes.map((change) => ({ path: change.path, kind: change.kind })),
        status: item.status,
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
      return extension('vtcode:error', item.id, 'failed', { message: item.message })
  }
}

/** Items the specification defines (shown without extensions): messages and reasoning. */
export function isStandardItem(item: ThreadItem): boolean {
  return item.type === 'agent_message' || item.type === 'reasoning'
}

/** The item with its streamed text emptied: what `output_item.added` shows. */
export function withoutText(item: ThreadItem): ThreadItem {
  switch (item.type) {
    case 'agent_message':
    case 'reasoning':
      return { ...item, text: '' }
    case 'tool_output':
      return { ...item, output: '', spool_path: undefined }
    default:
      return item
  }
}
