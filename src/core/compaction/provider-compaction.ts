import type { HistoryMessage } from '../../contract/history-message.ts'
import type { MemoryEnvelope } from '../../contract/memory-envelope.ts'
import { summaryText } from './local-compaction.ts'
import {
  type EnvelopePlacement,
  insertMemoryEnvelope,
  stripMemoryEnvelope,
} from './render-envelope.ts'

/**
 * A provider-native compaction result (VT Code §4, mode `provider`) made into the compacted
 * history: tool calls without their results, and results without their call, are left out
 * wherever they are (`sendableWindow`), the user messages and the opaque compaction item stay
 * as the provider returned them, and when the provider answered with a summary only (no
 * compaction item) the source's continuity tail is appended. The memory envelope message is inserted as for local compaction.
 */

export interface ProviderCompacted {
  /** The provider's window, made sendable, without the envelope. */
  base: HistoryMessage[]
  /** No compaction item came back: the tail was appended. */
  summaryOnly: boolean
  /** The text the memory envelope records as the summary. */
  summary: string
}

export function isCompactionItem(message: HistoryMessage): boolean {
  return message.role === 'compaction'
}

/**
 * The provider's window made sendable, in one pass over it: an assistant message whose tool
 * calls are not each answered once by the tool messages right after it (a call unanswered, an id
 * twice) is dropped with those results; a tool message answering no call of the message before
 * its run is dropped alone. Anywhere in the window, not only at its end (a call cut from its
 * result in the middle is rejected by the provider as surely as a trailing one); what keeps the
 * protocol is kept as it is.
 */
export function sendableWindow(messages: readonly HistoryMessage[]): HistoryMessage[] {
  const kept: HistoryMessage[] = []
  let index = 0
  while (index < messages.length) {
    const message = messages[index] as HistoryMessage
    index += 1
    if (message.role === 'tool') continue // answers no call directly before it
    const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : []
    if (calls.length === 0) {
      kept.push(message)
      continue
    }
    const open = new Set(calls.map((call) => call.id))
    const results: HistoryMessage[] = []
    let unanswered = open.size === calls.length ? open.size : -1
    for (; messages[index]?.role === 'tool'; index++) {
      const result = messages[index] as Extract<HistoryMessage, { role: 'tool' }>
      if (!open.delete(result.tool_call_id)) continue // a stray or second result
      results.push(result)
      unanswered -= 1
    }
    if (unanswered === 0) kept.push(message, ...results)
  }
  return kept
}

export function completeProviderCompaction(
  output: readonly HistoryMessage[],
  source: readonly HistoryMessage[],
  tail: readonly HistoryMessage[],
): ProviderCompacted {
  const window = sendableWindow(stripMemoryEnvelope(output))
  const summaryOnly = !window.some(isCompactionItem)
  const base = summaryOnly ? [...window, ...tail] : window
  // A summary-only answer is readable text; an opaque item leaves a summary derived from the source.
  const answer = summaryOnly
    ? window
        .filter((message) => message.role === 'assistant' || message.role === 'system')
        .map((message) => message.content.trim())
        .filter(Boolean)
        .join('\n\n')
    : ''
  return { base, summaryOnly, summary: summaryText(answer, source) }
}

export function withEnvelope(
  base: readonly HistoryMessage[],
  envelope: MemoryEnvelope,
  placement: EnvelopePlacement,
): HistoryMessage[] {
  return insertMemoryEnvelope(base, envelope, placement)
}
