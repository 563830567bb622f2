import type { HistoryMessage } from '../../contract/history-message.ts'
import type { MemoryEnvelope } from '../../contract/memory-envelope.ts'

/**
 * The memory envelope as the model reads it: one system message starting
 * `[Session Memory Envelope]\nSummary:\n…`, then the optional sections in VT Code's order, separated
 * by blank lines (text sections `Title\ntext`, lists `Title\n- a\n- b`, facts `[source] fact`).
 * A history holds at most one: any earlier envelope message is stripped before one is inserted.
 */

export const MEMORY_ENVELOPE_HEADER = '[Session Memory Envelope]'
export const SUMMARY_MESSAGE_PREFIX = 'Previous conversation summary:\n'

export function renderMemoryEnvelope(envelope: MemoryEnvelope): string {
  const sections = [`${MEMORY_ENVELOPE_HEADER}\nSummary:\n${envelope.summary.trim()}`]
  const text = (title: string, value: string | undefined) => {
    const trimmed = value?.trim()
    if (trimmed) sections.push(`${title}\n${trimmed}`)
  }
  const list = (title: string, items: readonly string[]) => {
    if (items.length > 0) sections.push(`${title}\n- ${items.join('\n- ')}`)
  }
  text('Objective', envelope.objective)
  text('Task Tracker', envelope.task_summary)
  text('Spec Summary', envelope.spec_summary)
  text('Evaluation Summary', envelope.evaluation_summary)
  text('Verification Status', envelope.verification_summary)
  list('Constraints', envelope.constraints)
  list('Touched Files', envelope.touched_files)
  if (envelope.grounded_facts.length > 0) {
    const facts = envelope.grounded_facts.map((fact) => `[${fact.source}] ${fact.fact.trim()}`)
    sections.push(`Grounded Facts:\n${facts.join('\n')}`)
  }
  list('Open Questions', envelope.open_questions)
  list('Verification Todo', envelope.verification_todo)
  list('Delegation Notes', envelope.delegation_notes)
  text('History Artifact', envelope.history_artifact_path)
  return sections.join('\n\n')
}

export function memoryEnvelopeMessage(envelope: MemoryEnvelope): HistoryMessage {
  return { role: 'system', content: renderMemoryEnvelope(envelope) }
}

export function isMemoryEnvelopeMessage(message: HistoryMessage): boolean {
  return message.role === 'system' && message.content.startsWith(MEMORY_ENVELOPE_HEADER)
}

export function isSummaryMessage(message: HistoryMessage): boolean {
  return message.role === 'system' && message.content.startsWith(SUMMARY_MESSAGE_PREFIX)
}

/** The history without envelope messages (a new array; the input is not changed). */
export function stripMemoryEnvelope(history: readonly HistoryMessage[]): HistoryMessage[] {
  return history.filter((message) => !isMemoryEnvelopeMessage(message))
}

/**
 * `start`: first message (manual compaction, fork, resume). `before_last_user_or_summary` (auto
 * compaction): just before the last user message or summary message, else first. Both places sit
 * between protocol groups, so no tool call is separated from its results.
 */
export type EnvelopePlacement = 'start' | 'before_last_user_or_summary'

export function insertMemoryEnvelope(
  history: readonly HistoryMessage[],
  envelope: MemoryEnvelope,
  placement: EnvelopePlacement,
): HistoryMessage[] {
  const stripped = stripMemoryEnvelope(history)
  let at = 0
  if (placement === 'before_last_user_or_summary') {
    at = Math.max(
      0,
      stripped.findLastIndex((message) => message.role === 'user' || isSummaryMessage(message)),
    )
  }
  stripped.splice(at, 0, memoryEnvelopeMessage(envelope))
  return stripped
}
