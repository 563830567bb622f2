import type { HistoryMessage } from '../../contract/history-message.ts'

/**
 * Bounded previews of messages that are too large to keep whole: the text keeps its head and its
 * tail around a note naming the archived copy; oversized tool-call arguments become `{}`. Call
 * ids, tool names and roles are kept, so the protocol pairing survives.
 */

export interface PreviewLimits {
  /** Characters of text kept per message (head two thirds, tail one third). */
  maxChars: number
  /** Tool-call arguments longer than this are replaced by `{}`. */
  maxArgumentChars: number
  /** Where the full message can be read again (the compaction's history artifact). */
  archivePath?: string | undefined
}

export const DEFAULT_PREVIEW_LIMITS: PreviewLimits = { maxChars: 8_000, maxArgumentChars: 2_000 }

/** Text within `maxChars`, or its head and tail around a note saying what was left out. */
export function headAndTailPreview(text: string, maxChars: number, archivePath?: string): string {
  if (text.length <= maxChars) return text
  const budget = Math.max(0, maxChars)
  const headEnd = safeCut(text, Math.ceil((budget * 2) / 3))
  const tailStart = safeCut(text, text.length - Math.floor(budget / 3))
  const omitted = tailStart - headEnd
  const where = archivePath ? `the archived history ${archivePath}` : 'the archived history'
  return `${text.slice(0, headEnd)}\n[… ${omitted} characters omitted from this preview; the full message is kept in ${where} …]\n${text.slice(tailStart)}`
}

/** Moves a cut off the middle of a surrogate pair. */
function safeCut(text: string, index: number): number {
  const at = Math.min(Math.max(index, 0), text.length)
  const code = text.charCodeAt(at - 1)
  return at > 0 && at < text.length && code >= 0xd800 && code <= 0xdbff ? at - 1 : at
}

export function previewMessage(message: HistoryMessage, limits: PreviewLimits): HistoryMessage {
  // An opaque provider compaction item has no text to bound.
  if (message.role === 'compaction') return message
  const content = headAndTailPreview(message.content, limits.maxChars, limits.archivePath)
  switch (message.role) {
    case 'assistant': {
      if (!message.tool_calls?.length)
        return content === message.content ? message : { ...message, content }
      return {
        role: 'assistant',
        content,
        tool_calls: message.tool_calls.map((call) =>
          call.arguments.length > limits.maxArgumentChars ? { ...call, arguments: '{}' } : call,
        ),
      }
    }
    default:
      return content === message.content ? message : { ...message, content }
  }
}
