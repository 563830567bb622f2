import type { PendingCall } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { EventDispatcher } from '../engine/event-dispatcher.ts'
import { artifactNoticeIn } from './output-preview.ts'
import { toolCallEnding } from './tool-call-ending.ts'
import { toolOutputPayload } from './tool-output-text.ts'

/** Bytes of a tool's answer shown in the tool_output item (the model gets the whole bounded answer). */
const OUTPUT_PREVIEW_BYTES = 6 * 1024

export type ToolOutcomeValue = 'success' | 'error' | 'invalid_tool' | 'cancelled'

export const INTERRUPTED_OUTPUT =
  'interrupted: the invocation stopped before this tool result was recorded; the tool was not run again'

/**
 * Records a tool call's end as VT Code does: the invocation item completes with its outcome,
 * then the `<id>:output` item starts empty and completes with the text extracted from the
 * answer (see tool-output-text.ts; `""` plus `spool_path` when the answer was spooled),
 * previewed; the model's transcript gets the full answer as a tool message.
 */
export function recordToolResult(
  dispatcher: EventDispatcher,
  history: HistoryMessage[],
  call: PendingCall,
  status: 'completed' | 'failed',
  outcome: ToolOutcomeValue,
  output: string,
  extra: { exitCode?: number; spoolPath?: string } = {},
): void {
  const { events, output: base } = toolCallEnding(call, status, outcome)
  for (const event of events) dispatcher.emit(event)
  const payload = toolOutputPayload(output)
  const spoolPath = payload.spoolPath ?? extra.spoolPath
  dispatcher.emit({
    type: 'item.completed',
    item: {
      ...base,
      ...(spoolPath !== undefined ? { spool_path: spoolPath } : {}),
      output: spoolPath !== undefined ? '' : preview(payload.text),
      ...(extra.exitCode !== undefined ? { exit_code: extra.exitCode } : {}),
      status,
    },
  })
  history.push({ role: 'tool', tool_call_id: call.tool_call_id, content: output })
}

function preview(text: string): string {
  const bytes = new TextEncoder().encode(text)
  if (bytes.byteLength <= OUTPUT_PREVIEW_BYTES) return text
  const head = new TextDecoder().decode(bytes.slice(0, OUTPUT_PREVIEW_BYTES)).replace(/\uFFFD$/, '')
  const marker = `${head}\n[output truncated: ${bytes.byteLength} bytes in all]`
  // A preview of an output kept as an artifact keeps the notice that names it.
  const notice = artifactNoticeIn(text)
  return notice === undefined ? marker : `${marker}\n${notice}`
}
