import type { HistoryMessage } from '../../contract/history-message.ts'
import type { MemoryEnvelope } from '../../contract/memory-envelope.ts'
import {
  type ContinuityOptions,
  type ContinuitySelection,
  selectContinuity,
  tooShortToCompact,
} from './continuity-tail.ts'
import { headAndTailPreview } from './message-preview.ts'
import { protocolGroups } from './protocol-groups.ts'
import {
  type EnvelopePlacement,
  insertMemoryEnvelope,
  SUMMARY_MESSAGE_PREFIX,
  stripMemoryEnvelope,
} from './render-envelope.ts'

/**
 * Local compaction in two steps around the one model call the engine makes:
 * {@link planLocalCompaction} strips any earlier envelope, picks what stays verbatim and builds the
 * summary request; {@link completeLocalCompaction} turns the model's summary into the compacted
 * history `[system "Previous conversation summary:\n…"] + retained user messages + continuity
 * tail`, then inserts the memory envelope message.
 */

export const SUMMARY_INSTRUCTION = [
  'You are compacting the transcript of an agent session so that the work can go on in a fresh,',
  'smaller context. Write a summary that lets the next context continue seamlessly, under these',
  'headings:',
  '',
  '## Goal — what the user wants, with acceptance criteria.',
  '## Constraints — requirements and preferences the user stated.',
  '## Current step — what was being done last, which tool call or edit was under way, and where it stopped.',
  '## Last result — the last completed action and its outcome, with exact errors or statuses.',
  '## Progress — done, in progress, blocked.',
  '## Decisions — each with its reason.',
  '## Next steps — in order.',
  '## Facts — file paths read or changed, commands and test results, identifiers and values needed to continue.',
  '',
  'Be concise and concrete. Do not invent facts; say what is unknown.',
].join('\n')

/** Characters of one message copied into the summary request (longer ones keep head and tail). */
export const SUMMARY_INPUT_MESSAGE_CHARS = 16_000

export interface SummaryRequestOptions {
  /** RFC 3339 time of the request. */
  now: string
  /** Replaces {@link SUMMARY_INSTRUCTION} (manual compaction with instructions). */
  instructions?: string | undefined
  maxMessageChars?: number
  archivePath?: string | undefined
}

/** The one summary request: the instruction, then the transcript as labelled text. */
export function buildSummaryRequest(
  history: readonly HistoryMessage[],
  options: SummaryRequestOptions,
): HistoryMessage[] {
  const limit = options.maxMessageChars ?? SUMMARY_INPUT_MESSAGE_CHARS
  const lines = [`Summary requested at ${options.now}. The transcript follows.`]
  for (const message of history) {
    const body = transcriptText(message)
    if (body === '') continue
    const label = message.role === 'tool' ? `tool ${message.tool_call_id}` : message.role
    lines.push(`\n[${label}]\n${headAndTailPreview(body, limit, options.archivePath)}`)
  }
  return [
    { role: 'system', content: options.instructions?.trim() || SUMMARY_INSTRUCTION },
    { role: 'user', content: lines.join('\n') },
  ]
}

function transcriptText(message: HistoryMessage): string {
  const parts = [message.content.trim()]
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      parts.push(`→ tool call ${call.id}: ${call.name}(${call.arguments})`)
    }
  }
  return parts.filter(Boolean).join('\n')
}

export interface PlanOptions {
  /** Manual and model-switch compaction summarize even short histories. */
  force: boolean
  now: string
  instructions?: string | undefined
  continuity: ContinuityOptions
}

export interface LocalCompactionPlan {
  kind: 'summarize'
  /** The history being compacted: the transcript without its envelope message. */
  source: HistoryMessage[]
  /** `original_message_count` of the boundary event (excludes a prior envelope message). */
  originalMessageCount: number
  /** Send to the model as one request, without tools. */
  request: HistoryMessage[]
  selection: ContinuitySelection
}

export type PlanResult = LocalCompactionPlan | { kind: 'skip'; reason: 'too_short' }

export function planLocalCompaction(
  history: readonly HistoryMessage[],
  options: PlanOptions,
): PlanResult {
  const source = stripMemoryEnvelope(history)
  if (source.length === 0 || tooShortToCompact(source, { force: options.force })) {
    return { kind: 'skip', reason: 'too_short' }
  }
  return {
    kind: 'summarize',
    source,
    originalMessageCount: source.length,
    request: buildSummaryRequest(source, {
      now: options.now,
      instructions: options.instructions,
      archivePath: options.continuity.archivePath,
    }),
    selection: selectContinuity(source, options.continuity),
  }
}

/** The model's summary, or (when it came back blank) one derived from the newest messages. */
export function summaryText(answer: string, source: readonly HistoryMessage[]): string {
  const trimmed = answer.trim()
  if (trimmed !== '') return trimmed
  const recent: string[] = []
  for (let i = source.length - 1; i >= 0 && recent.length < 4; i--) {
    const message = source[i] as HistoryMessage
    const text = message.content.split(/\s+/).filter(Boolean).join(' ')
    if (text !== '')
      recent.push(`${message.role}: ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`)
  }
  return recent.length === 0
    ? 'Compacted earlier conversation state and preserved continuity facts.'
    : `Compacted earlier conversation state. Recent preserved context: ${recent.reverse().join(' | ')}`
}

export interface CompactedHistory {
  messages: HistoryMessage[]
  originalMessageCount: number
  /** `compacted_message_count`: the new history's length, envelope message included. */
  compactedMessageCount: number
}

export function completeLocalCompaction(
  plan: LocalCompactionPlan,
  summary: string,
  envelope: MemoryEnvelope,
  placement: EnvelopePlacement,
): CompactedHistory {
  const text = summaryText(summary, plan.source)
  const summaryMessage: HistoryMessage = {
    role: 'system',
    content: `${SUMMARY_MESSAGE_PREFIX}${text}`,
  }
  const retained = plan.selection.retainedUsers
  const build = (tail: readonly HistoryMessage[]) =>
    insertMemoryEnvelope([summaryMessage, ...retained, ...tail], envelope, placement)
  // A compaction never makes the request larger: while the result is not smaller than what it
  // replaces, the tail gives up its oldest groups (the summary covers them). The user's own
  // messages stay. One pass: the size falls by each group's as it goes, where building and
  // measuring the whole history again per group cost the square of the tail's groups (8,000
  // one-character user messages under a long summary: 4.6 s of the server's thread).
  const limit = historySize(plan.source)
  let messages = build(plan.selection.tail)
  let size = historySize(messages)
  if (size >= limit && plan.selection.tail.length > 0) {
    const groups = protocolGroups(plan.selection.tail)
    let dropped = 0
    while (size >= limit && dropped < groups.length) {
      size -= historySize((groups[dropped] as (typeof groups)[number]).messages)
      dropped += 1
    }
    messages = build(groups.slice(dropped).flatMap((group) => group.messages))
  }
  return {
    messages,
    originalMessageCount: plan.originalMessageCount,
    compactedMessageCount: messages.length,
  }
}

/** Characters a history puts in a request: contents and tool-call names and arguments. */
function historySize(messages: readonly HistoryMessage[]): number {
  let size = 0
  for (const message of messages) {
    size += message.content.length
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) size += call.name.length + call.arguments.length
    }
  }
  return size
}

/** Where the envelope goes for a compaction trigger: auto keeps it next to the live edge. */
export function envelopePlacementFor(trigger: string): EnvelopePlacement {
  return trigger === 'auto' ? 'before_last_user_or_summary' : 'start'
}
