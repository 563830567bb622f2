import { corruptData } from './corrupt-data.ts'
import type { HistoryMessage } from './history-message.ts'

/**
 * Each text stored once in a batch (version 4): a tool's answer is both the `output` of its
 * `tool_output` item and the `content` of the transcript's tool message, an answer both the
 * `text` of its `agent_message` item and the assistant message's `content`. The event keeps the
 * text (it is VT Code's line, written as it is to events.jsonl); the transcript's message names
 * the item instead: `content_of: "<item id>"`, the item completed by an event of the same batch.
 * Only where the texts are equal and long enough to be worth it; the reader puts the text back
 * before the message is validated, so everything above the batch sees whole messages.
 */

/** Shorter texts stay inline: a reference costs about as much. */
const MIN_REFERRED_CHARS = 64

/** The texts of the items completed by `events`, by item id (tool outputs and answers). */
function completedTexts(events: readonly unknown[]): Map<string, string> {
  const texts = new Map<string, string>()
  for (const entry of events) {
    const event = field(entry, 'event')
    if (field(event, 'type') !== 'item.completed') continue
    const item = field(event, 'item')
    const id = field(item, 'id')
    const type = field(item, 'type')
    const text =
      type === 'tool_output'
        ? field(item, 'output')
        : type === 'agent_message'
          ? field(item, 'text')
          : undefined
    if (typeof id === 'string' && typeof text === 'string') texts.set(id, text)
  }
  return texts
}

/**
 * The transcript delta as written: messages whose content an event holds name its item. `lines`
 * are the batch's events exactly as written (what a reader will find the texts in).
 */
export function referContents(
  append: readonly HistoryMessage[],
  lines: readonly string[],
): unknown[] {
  const completed = lines.filter((line) => line.includes('"item.completed"'))
  const texts = completedTexts(completed.map((line) => JSON.parse(line) as unknown))
  const byText = new Map<string, string>()
  for (const [id, text] of texts) if (text.length >= MIN_REFERRED_CHARS) byText.set(text, id)
  return append.map((message) => {
    if (message.role !== 'tool' && message.role !== 'assistant') return message
    const id = byText.get(message.content)
    if (id === undefined) return message
    const { content: _, ...rest } = message
    return { ...rest, content_of: id }
  })
}

/**
 * Puts back the content of every message of a stored transcript delta (`append`, as read) that
 * names an item (`content_of`). Throws corrupt_data for an item the batch does not complete.
 */
export function resolveContents(
  append: unknown,
  events: readonly unknown[],
  what: string,
): unknown {
  if (!Array.isArray(append)) return append
  let texts: Map<string, string> | undefined
  return append.map((message, index) => {
    const id = field(message, 'content_of')
    if (id === undefined) return message
    texts ??= completedTexts(events)
    const text = typeof id === 'string' ? texts.get(id) : undefined
    if (text === undefined) {
      throw corruptData(
        what,
        `history.append.${index} names content of an item the batch does not complete`,
      )
    }
    const { content_of: _, ...rest } = message as Record<string, unknown>
    return { ...rest, content: text }
  })
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined
}
