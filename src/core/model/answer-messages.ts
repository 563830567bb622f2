import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { ModelResponse } from '../../ports/model-client.ts'

/** Streaming snapshots of agent text: every ≥256 new characters, at most 64 per message. */
const TEXT_UPDATE_CHARS = 256
const TEXT_MAX_UPDATES = 64

interface OpenMessage {
  id: string
  /** Which message item of the answer this is (the stream's `part`). */
  part: number | undefined
  /** Position among the answer's messages. */
  ordinal: number
  text: string
  updates: number
  atUpdate: number
}

/**
 * The `agent_message` items of one model answer: one per message item the provider streams (a
 * Responses answer may hold a commentary preamble and a final answer), each as item.started →
 * item.updated snapshots → item.completed. A text delta of another `part` completes the open
 * message and starts the next.
 */
export class AnswerMessages {
  #open: OpenMessage | undefined
  #count = 0
  #streamed = ''

  constructor(
    private readonly emit: (event: ThreadEvent) => void,
    private readonly nextItemId: () => string,
  ) {}

  /** Text streamed so far, all messages together. */
  get streamed(): string {
    return this.#streamed
  }

  delta(text: string, part: number | undefined): void {
    this.#streamed += text
    const open = this.#open
    if (open && part !== undefined && open.part !== undefined && part !== open.part) {
      this.#complete(open.text)
    }
    const message = this.#open
    if (!message) {
      const id = this.nextItemId()
      this.#open = { id, part, ordinal: this.#count++, text, updates: 0, atUpdate: text.length }
      this.emit({ type: 'item.started', item: { id, type: 'agent_message', text } })
      return
    }
    message.text += text
    if (message.text.length - message.atUpdate >= TEXT_UPDATE_CHARS) {
      if (message.updates >= TEXT_MAX_UPDATES) return
      message.updates += 1
      message.atUpdate = message.text.length
      this.emit({
        type: 'item.updated',
        item: { id: message.id, type: 'agent_message', text: message.text },
      })
    }
  }

  /**
   * Completes the answer's messages with the text the provider settled on: the open message
   * with its part's final text (or the whole answer's, when it was one message), and any part
   * that was never streamed as a message of its own. Returns the answer's text.
   */
  finish(response: ModelResponse): string {
    const parts = response.parts
    const open = this.#open
    if (open) {
      const settled = parts ? parts[open.ordinal]?.text : this.#count === 1 ? response.text : ''
      this.#complete(settled || open.text)
    }
    if (parts) {
      for (const part of parts.slice(this.#count)) this.#completeNew(part.text)
    } else if (this.#count === 0 && response.text) {
      this.#completeNew(response.text)
    }
    return response.text || this.#streamed
  }

  /** A failed answer: the open message is completed with what arrived. */
  abandon(): void {
    if (this.#open) this.#complete(this.#open.text)
  }

  #complete(text: string): void {
    const open = this.#open
    if (!open) return
    this.#open = undefined
    this.emit({ type: 'item.completed', item: { id: open.id, type: 'agent_message', text } })
  }

  #completeNew(text: string): void {
    this.#count += 1
    const id = this.nextItemId()
    this.emit({ type: 'item.completed', item: { id, type: 'agent_message', text } })
  }
}
