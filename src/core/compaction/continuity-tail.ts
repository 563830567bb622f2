import type { HistoryMessage } from '../../contract/history-message.ts'
import { previewMessage } from './message-preview.ts'
import { isCompleteGroup, protocolGroups, trimIncompleteTail } from './protocol-groups.ts'

/**
 * What a compacted history keeps verbatim (VT Code §4): the continuity tail, the newest contiguous
 * suffix of complete protocol groups within ≈ 20,000 tokens, and up to 4 earlier user messages
 * (within 20,000 tokens). The newest group is made sendable first (an unanswered trailing tool
 * call is dropped with what follows it); if it alone is over the target it is kept with every
 * message bounded to a preview. Histories of at most 10 messages are not compacted unless forced.
 */

export const CONTINUITY_TAIL_TARGET_TOKENS = 20_000
export const DEFAULT_RETAINED_USER_MESSAGES = 4
export const DEFAULT_RETAINED_USER_MESSAGE_TOKENS = 20_000
/** Histories of at most this many messages are left alone unless compaction is forced. */
export const MIN_MESSAGES_TO_COMPACT = 10
/** Per-message preview bounds of an oversized newest group (characters). */
const MIN_PREVIEW_CHARS = 512
const MAX_PREVIEW_CHARS = 8_000
const MAX_PREVIEW_ARGUMENT_CHARS = 2_000
/** A truncated retained user message keeps at least this many tokens, or is left out. */
const MIN_TRUNCATED_USER_TOKENS = 4

export interface ContinuityOptions {
  countTokens: (message: HistoryMessage) => number
  targetTokens?: number
  retainedUserMessages?: number
  retainedUserMessageTokens?: number
  /** Named in preview notes: where the full messages are archived. */
  archivePath?: string | undefined
}

export interface ContinuitySelection {
  /** Earlier user messages kept verbatim (or truncated), oldest first. */
  retainedUsers: HistoryMessage[]
  tail: HistoryMessage[]
  retainedTokens: number
  tailTokens: number
  /** Index in the source history where the tail starts (history.length when empty). */
  tailStart: number
  /** Messages of the newest group dropped because their tool calls were unanswered. */
  droppedFromNewest: number
  /** The newest group was over the target and is kept as previews. */
  previewed: boolean
}

/** True when a history this long is left as it is (unless compaction is forced). */
export function tooShortToCompact(
  history: readonly HistoryMessage[],
  { force }: { force: boolean },
): boolean {
  return !force && history.length <= MIN_MESSAGES_TO_COMPACT
}

/** Long: one pass from the transcript's end, whose running budget a split would scatter. */
export function selectContinuity(
  history: readonly HistoryMessage[],
  options: ContinuityOptions,
): ContinuitySelection {
  const count = options.countTokens
  const sum = (messages: readonly HistoryMessage[]) =>
    messages.reduce((total, message) => total + count(message), 0)
  // When the whole history fits in the tail, the tail takes at most half of it, so the summary
  // replaces the older part and a compaction never makes the next request larger.
  const fullTarget = options.targetTokens ?? CONTINUITY_TAIL_TARGET_TOKENS
  const whole = sum(history)
  const target = whole <= fullTarget ? Math.floor(whole / 2) : fullTarget

  const groups = protocolGroups(history)
  let droppedFromNewest = 0
  for (let newest = groups.pop(); newest; newest = groups.pop()) {
    const trimmed = trimIncompleteTail(newest.messages)
    droppedFromNewest += trimmed.dropped
    if (trimmed.messages.length > 0) {
      groups.push({ ...newest, messages: trimmed.messages })
      break
    }
  }

  let tail: HistoryMessage[] = []
  let tailTokens = 0
  let tailStart = history.length
  let previewed = false
  const last = groups.at(-1)
  if (last) {
    tail = last.messages
    tailTokens = sum(tail)
    tailStart = last.start
    if (tailTokens > fullTarget) {
      tail = previewGroup(tail, fullTarget, options.archivePath)
      tailTokens = sum(tail)
      previewed = true
    } else {
      // Older groups, newest first; joined once (prepending each copied the tail again).
      const older: HistoryMessage[][] = []
      for (let g = groups.length - 2; g >= 0; g--) {
        const group = groups[g]
        if (!group || !isCompleteGroup(group.messages)) break
        const tokens = sum(group.messages)
        if (tailTokens + tokens > target) break
        older.push(group.messages)
        tailTokens += tokens
        tailStart = group.start
      }
      tail = [...older.reverse().flat(), ...tail]
    }
  }

  const retained = retainUsers(history.slice(0, tailStart), {
    count,
    maxMessages: options.retainedUserMessages ?? DEFAULT_RETAINED_USER_MESSAGES,
    maxTokens: options.retainedUserMessageTokens ?? DEFAULT_RETAINED_USER_MESSAGE_TOKENS,
  })
  return {
    retainedUsers: retained.messages,
    tail,
    retainedTokens: retained.tokens,
    tailTokens,
    tailStart,
    droppedFromNewest,
    previewed,
  }
}

/** Every message bounded so the group lands near the target (never below the minimum preview). */
function previewGroup(
  messages: readonly HistoryMessage[],
  targetTokens: number,
  archivePath: string | undefined,
): HistoryMessage[] {
  const perMessage = Math.floor((targetTokens * 4) / Math.max(1, messages.length))
  const maxChars = Math.min(MAX_PREVIEW_CHARS, Math.max(MIN_PREVIEW_CHARS, perMessage))
  const maxArgumentChars = Math.min(MAX_PREVIEW_ARGUMENT_CHARS, maxChars)
  return messages.map((message) =>
    previewMessage(message, { maxChars, maxArgumentChars, archivePath }),
  )
}

/** Newest non-empty user messages first, up to the limits; the one that overflows is truncated. */
function retainUsers(
  earlier: readonly HistoryMessage[],
  limits: { count: (message: HistoryMessage) => number; maxMessages: number; maxTokens: number },
): { messages: HistoryMessage[]; tokens: number } {
  const kept: HistoryMessage[] = []
  let remaining = limits.maxTokens
  if (limits.maxMessages <= 0 || remaining <= 0) return { messages: kept, tokens: 0 }
  for (let i = earlier.length - 1; i >= 0 && kept.length < limits.maxMessages; i--) {
    const message = earlier[i]
    if (message?.role !== 'user' || message.content.trim() === '') continue
    const tokens = limits.count(message)
    if (tokens <= remaining) {
      kept.push(message)
      remaining -= tokens
      continue
    }
    if (remaining > MIN_TRUNCATED_USER_TOKENS) {
      const share = (remaining - MIN_TRUNCATED_USER_TOKENS) / tokens
      let end = Math.floor(message.content.length * share)
      const code = message.content.charCodeAt(end - 1)
      if (code >= 0xd800 && code <= 0xdbff) end--
      const content = message.content.slice(0, end).trim()
      if (content !== '') {
        const truncated: HistoryMessage = { ...message, content }
        kept.push(truncated)
        remaining -= Math.min(remaining, limits.count(truncated))
      }
    }
    break
  }
  return { messages: kept.reverse(), tokens: limits.maxTokens - remaining }
}
