import type { ThreadItem } from '../../contract/thread-item.ts'
import type { Emit } from './bridge-state.ts'
import { textPart } from './items.ts'

/** Where an item's part events point: its item id and output index. */
interface At {
  item_id: string
  output_index: number
}

/**
 * The part an item streams its text into, opened as the item is added: a message's
 * `output_text` content part, a reasoning item's `summary_text` part; other items have none.
 */
export function openTextPart(item: ThreadItem, at: At, emit: Emit): void {
  if (item.type === 'agent_message') {
    emit({ type: 'response.content_part.added', ...at, content_index: 0, part: textPart('') })
  } else if (item.type === 'reasoning') {
    const part = { type: 'summary_text' as const, text: '' }
    emit({ type: 'response.reasoning_summary_part.added', ...at, summary_index: 0, part })
  }
}

/** The text and its part done, as the item completes (before its `output_item.done`). */
export function closeTextPart(item: ThreadItem, at: At, emit: Emit): void {
  if (item.type === 'agent_message') {
    const { text } = item
    emit({ type: 'response.output_text.done', ...at, content_index: 0, text, logprobs: [] })
    emit({ type: 'response.content_part.done', ...at, content_index: 0, part: textPart(text) })
  } else if (item.type === 'reasoning') {
    const { text } = item
    const part = { type: 'summary_text' as const, text }
    emit({ type: 'response.reasoning_summary_text.done', ...at, summary_index: 0, text })
    emit({ type: 'response.reasoning_summary_part.done', ...at, summary_index: 0, part })
  }
}
