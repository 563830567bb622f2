import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'

/**
 * The tool-call protocol every request transcript must keep: an assistant message with tool
 * calls is followed directly by one tool message per call id, before any other message; a tool
 * message answers exactly one such open call. A "protocol group" starts at a user message (the
 * messages before the first one form a group without an anchor); a group is complete when it
 * keeps the protocol on its own.
 */

export type ProtocolViolationKind =
  | 'unanswered_tool_call'
  | 'orphan_tool_result'
  | 'duplicate_tool_call_id'

export interface ProtocolViolation {
  kind: ProtocolViolationKind
  /** The assistant message of an unanswered or duplicate call; the tool message of an orphan. */
  index: number
  tool_call_id: string
}

function callsOf(message: HistoryMessage): readonly { id: string }[] {
  return message.role === 'assistant' ? (message.tool_calls ?? []) : []
}

/** Every break of the protocol, in transcript order. */
export function protocolViolations(messages: readonly HistoryMessage[]): ProtocolViolation[] {
  const violations: ProtocolViolation[] = []
  /** Open call ids → index of the assistant message that made them. */
  let open = new Map<string, number>()
  const closeOpen = () => {
    for (const [id, index] of open)
      violations.push({ kind: 'unanswered_tool_call', index, tool_call_id: id })
    open = new Map()
  }
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      if (open.has(message.tool_call_id)) open.delete(message.tool_call_id)
      else
        violations.push({ kind: 'orphan_tool_result', index, tool_call_id: message.tool_call_id })
      return
    }
    closeOpen()
    for (const call of callsOf(message)) {
      if (open.has(call.id)) {
        violations.push({ kind: 'duplicate_tool_call_id', index, tool_call_id: call.id })
      } else {
        open.set(call.id, index)
      }
    }
  })
  closeOpen()
  return violations.sort((a, b) => a.index - b.index)
}

/** Throws when `messages` holds an unanswered tool call or a tool result without its call. */
export function assertNoOrphans(messages: readonly HistoryMessage[]): void {
  const violations = protocolViolations(messages)
  if (violations.length === 0) return
  const first = violations[0] as ProtocolViolation
  throw new TurnlineError(
    'internal',
    `transcript breaks the tool-call protocol: ${first.kind} ${JSON.stringify(first.tool_call_id)} at message ${first.index}` +
      (violations.length > 1 ? ` (and ${violations.length - 1} more)` : ''),
    { details: { violations } },
  )
}

export interface ProtocolGroup {
  /** Index in the source transcript of the group's first message. */
  start: number
  messages: HistoryMessage[]
  /** Starts at a user message. */
  anchored: boolean
}

/**
 * Splits at every user message. System messages and provider compaction items are left out
 * (they are summarized instead).
 */
export function protocolGroups(history: readonly HistoryMessage[]): ProtocolGroup[] {
  const groups: ProtocolGroup[] = []
  let current: ProtocolGroup | undefined
  history.forEach((message, index) => {
    if (message.role === 'system' || message.role === 'compaction') return
    if (message.role === 'user' || !current) {
      current = { start: index, messages: [], anchored: message.role === 'user' }
      groups.push(current)
    }
    current.messages.push(message)
  })
  return groups
}

export function isCompleteGroup(messages: readonly HistoryMessage[]): boolean {
  return protocolViolations(messages).length === 0
}

/**
 * The newest group made sendable: an assistant message whose calls are not all answered is
 * dropped with everything after it (the user anchor stays); a stray tool result is dropped alone.
 * One pass: dropping a stray result changes no other break (it opened and closed no call), so the
 * transcript is cut at its first other break and the stray results before that are left out —
 * what dropping one break at a time and looking again gave, at the square of the breaks' cost
 * (16,000 stray results took 12 s).
 */
export function trimIncompleteTail(messages: readonly HistoryMessage[]): {
  messages: HistoryMessage[]
  dropped: number
} {
  const violations = protocolViolations(messages)
  let cut = messages.length
  for (const violation of violations) {
    if (violation.kind !== 'orphan_tool_result') cut = Math.min(cut, violation.index)
  }
  const stray = new Set<number>()
  for (const violation of violations) {
    if (violation.kind === 'orphan_tool_result' && violation.index < cut) stray.add(violation.index)
  }
  const kept = messages.slice(0, cut).filter((_, index) => !stray.has(index))
  return { messages: kept, dropped: messages.length - kept.length }
}
