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
 * history: trailing assistant tool-call messages are popped (their results are not part of the
 * window), the user messages and the opaque compaction item stay as the provider returned them,
 * and when the provider answered with a summary only (no compaction item) the source's
 * continuity tail is appended. The memory envelope message is inserted as for local compaction.
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

/** Pops trailing assistant messages that carry tool calls (the provider kept no results). */
export function popTrailingToolCalls(messages: readonly HistoryMessage[]): HistoryMessage[] {
  const kept = [...messages]
  for (;;) {
    const last = kept.at(-1)
    if (last?.role !== 'assistant' || !last.tool_calls?.length) return kept
    kept.pop()
  }
}

export function completeProviderCompaction(
  output: readonly HistoryMessage[],
  source: readonly HistoryMessage[],
  tail: readonly HistoryMessage[],
): ProviderCompacted {
  const window = popTrailingToolCalls(stripMemoryEnvelope(output))
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
