import type { HistoryMessage } from '../../contract/history-message.ts'

/**
 * The history a fork starts from (VT Code `build_summarized_fork_history`): a minimal resume
 * artifact, deliberately without the continuity tail —
 *
 *   [system envelope?] + [system "Previous conversation summary:\n<summary>"]
 *     + the newest retained user messages (≤ 4, ≤ 20,000 estimated tokens, oldest first)
 *
 * The source session's memory envelope, when there is one, is placed at the start for the
 * target only; nothing is written back to the source. When no summary was saved (no compaction
 * has happened), the engine makes one summary model call with {@link forkSummaryRequest} (no
 * tools) and passes the answer here; VT Code runs a full compaction there instead, whose tail a
 * fork discards anyway.
 */

export const SUMMARY_PREFIX = 'Previous conversation summary:\n'
/** VT Code `context.dynamic.retained_user_messages` default. */
export const RETAINED_USER_MESSAGES = 4
/** Budget of the retained user messages, in estimated tokens. */
export const RETAINED_USER_TOKENS = 20_000
const ENVELOPE_PREFIX = '[Session Memory Envelope]'

/** Rough token estimate (4 characters per token), as used for budgets, not billing. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4)
}

export function summaryMessage(summary: string): HistoryMessage {
  return { role: 'system', content: `${SUMMARY_PREFIX}${summary}` }
}

/** The summary a compaction left in the transcript (the zero-cost fork path), if any. */
export function savedSummary(history: readonly HistoryMessage[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]
    if (message?.role === 'system' && message.content.startsWith(SUMMARY_PREFIX)) {
      return message.content.slice(SUMMARY_PREFIX.length)
    }
  }
  return undefined
}

/** The newest user messages within the count and token budget, oldest first. */
export function retainedUserMessages(
  history: readonly HistoryMessage[],
  max = RETAINED_USER_MESSAGES,
  tokenBudget = RETAINED_USER_TOKENS,
  countTokens: (text: string) => number = estimateTokens,
): HistoryMessage[] {
  const kept: HistoryMessage[] = []
  let budget = tokenBudget
  for (let i = history.length - 1; i >= 0 && kept.length < max; i--) {
    const message = history[i]
    if (message?.role !== 'user' || message.content.trim() === '') continue
    const cost = countTokens(message.content)
    if (cost <= budget) {
      kept.push(message)
      budget -= cost
    } else if (kept.length === 0) {
      // the newest request is never dropped, only bounded
      kept.push({ ...message, content: `${message.content.slice(0, budget * 4)}\n[truncated]` })
      break
    } else {
      break
    }
  }
  return kept.reverse()
}

export interface ForkHistoryInput {
  /** The source session's transcript (current segment). */
  history: readonly HistoryMessage[]
  /** The saved summary, or the answer of the one summary call. */
  summary: string
  /**
   * The source's memory envelope as its system message (`[Session Memory Envelope]…`, e.g.
   * `memoryEnvelopeMessage(envelope)`), if the source has one.
   */
  envelope?: HistoryMessage
  retainedUsers?: number
  /** Token counter for the retained-user budget; defaults to 4 characters per token. */
  countTokens?: (text: string) => number
}

export function buildSummarizedForkHistory(input: ForkHistoryInput): HistoryMessage[] {
  const out: HistoryMessage[] = []
  if (input.envelope) out.push(input.envelope)
  out.push(summaryMessage(input.summary))
  out.push(
    ...retainedUserMessages(
      input.history,
      input.retainedUsers ?? RETAINED_USER_MESSAGES,
      RETAINED_USER_TOKENS,
      input.countTokens,
    ),
  )
  return out
}

const SUMMARY_INSTRUCTIONS =
  'Summarize the conversation above for an agent that continues it in a new session without ' +
  'seeing it. Keep: the objective, decisions made and why, facts learned about the workspace ' +
  '(files, commands, results), work done, open questions and next steps. Be concise and ' +
  'factual; no preamble.'

/**
 * Messages for the one summary call when no summary was saved: the transcript (without prior
 * envelope or summary system messages, whose content is already folded in) plus an instruction.
 */
export function forkSummaryRequest(history: readonly HistoryMessage[]): HistoryMessage[] {
  const previous = savedSummary(history)
  const body = history.filter(
    (m) =>
      !(
        m.role === 'system' &&
        (m.content.startsWith(ENVELOPE_PREFIX) || m.content.startsWith(SUMMARY_PREFIX))
      ),
  )
  return [
    ...(previous !== undefined ? [summaryMessage(previous)] : []),
    ...body,
    { role: 'user', content: SUMMARY_INSTRUCTIONS },
  ]
}
