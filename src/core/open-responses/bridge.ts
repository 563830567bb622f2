import type { ParsedThreadEvent } from '../../contract/thread-event.ts'
import type { ThreadItem } from '../../contract/thread-item.ts'
import type { Usage } from '../../contract/usage.ts'
import { customEventFor } from './custom-events.ts'
import { completedStatus, streamedText, textPart, toOutputItem } from './items.ts'
import type {
  ItemStatus,
  OpenUsage,
  OutputItem,
  ResponseError,
  ResponseObject,
  StreamEvent,
} from './types.ts'

/** VT Code usage → Open Responses usage; `input_tokens_details` only when something was cached. */
export function toOpenUsage(usage: Usage): OpenUsage {
  const open: OpenUsage = {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
  }
  if (usage.cached_input_tokens > 0) {
    open.input_tokens_details = { cached_tokens: usage.cached_input_tokens }
  }
  return open
}

export interface BridgeOptions {
  responseId: string
  model: string
  /** Unix milliseconds; default Date.now. Response times are written in whole seconds. */
  now?: () => number
}

interface ItemState {
  index: number
  /** The streamed text sent so far as deltas. */
  sent: string
  done: boolean
}

// Events without distributive Omit: each variant minus its sequence number.
type Unsequenced<E> = E extends StreamEvent ? Omit<E, 'sequence_number'> : never
type Draft = Unsequenced<StreamEvent>

const TERMINAL = new Set(['completed', 'failed', 'incomplete'])

/**
 * Maps the ThreadEvents of one response to Open Responses stream events (reference §9). It is
 * stateful (sequence numbers, output indexes, items seen, call ids) and pure: feed events in
 * order with `push`, read the response object at any point with `response`.
 */
export class OpenResponsesBridge {
  private seq = 0
  private started = false
  private readonly state: ResponseObject
  private readonly items = new Map<string, ItemState>()
  private readonly callIds = new Map<string, string>()
  private readonly usedRawCallIds = new Set<string>()
  private readonly now: () => number

  constructor(options: BridgeOptions) {
    this.now = options.now ?? Date.now
    this.state = {
      id: options.responseId,
      object: 'response',
      created_at: this.seconds(),
      completed_at: null,
      status: 'in_progress',
      model: options.model,
      output: [],
      usage: null,
      error: null,
    }
  }

  get responseId(): string {
    return this.state.id
  }

  /** A copy of the response as it stands. */
  get response(): ResponseObject {
    return structuredClone(this.state)
  }

  /** The Open Responses events for one ThreadEvent (often none). */
  push(event: ParsedThreadEvent): StreamEvent[] {
    const out: StreamEvent[] = []
    const emit = (draft: Draft) => out.push(this.sequenced(draft))
    switch (event.type) {
      case 'thread.started':
        this.start(emit)
        break
      case 'item.started':
        this.start(emit)
        if (!this.items.has(event.item.id)) this.addItem(event.item, emit)
        break
      case 'item.updated':
        this.start(emit)
        this.updateItem(event.item, emit)
        break
      case 'item.completed':
        this.start(emit)
        this.completeItem(event.item, emit)
        break
      case 'turn.completed':
        this.finish('completed', toOpenUsage(event.usage), null, emit)
        break
      case 'turn.failed':
        this.finish(
          'failed',
          event.usage ? toOpenUsage(event.usage) : this.state.usage,
          { code: 'model_error', message: event.message },
          emit,
        )
        break
      case 'error':
        this.finish(
          'failed',
          this.state.usage,
          { code: 'server_error', message: event.message },
          emit,
        )
        break
      default: {
        const custom = customEventFor(event)
        if (!custom) break
        this.start(emit)
        emit({
          type: 'response.custom_event',
          response_id: this.state.id,
          event_type: custom.eventType,
          data: custom.data,
        })
      }
    }
    return out
  }

  private sequenced(draft: Draft): StreamEvent {
    const sequence_number = this.seq++
    if (draft.type === 'response.custom_event') {
      const { type, response_id, event_type, data } = draft
      return { type, response_id, event_type, sequence_number, data }
    }
    const { type, ...rest } = draft
    return { type, sequence_number, ...rest } as StreamEvent
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000)
  }

  /** response.created + response.in_progress, once, before anything else. */
  private start(emit: (draft: Draft) => void): void {
    if (this.started) return
    this.started = true
    emit({ type: 'response.created', response: this.response })
    emit({ type: 'response.in_progress', response: this.response })
  }

  private finish(
    status: 'completed' | 'failed',
    usage: OpenUsage | null,
    error: ResponseError | null,
    emit: (draft: Draft) => void,
  ): void {
    if (TERMINAL.has(this.state.status)) return
    this.start(emit)
    this.state.status = status
    this.state.usage = usage
    this.state.error = error
    if (status === 'completed') this.state.completed_at = this.seconds()
    emit({
      type: status === 'completed' ? 'response.completed' : 'response.failed',
      response: this.response,
    })
  }

  /** The call id of an invocation: its raw tool_call_id on first use, else its item id. */
  private callId = (invocationId: string, raw: string | undefined): string => {
    const known = this.callIds.get(invocationId)
    if (known !== undefined) return known
    const id = raw !== undefined && !this.usedRawCallIds.has(raw) ? raw : invocationId
    if (id === raw) this.usedRawCallIds.add(raw)
    this.callIds.set(invocationId, id)
    return id
  }

  private snapshot(item: ThreadItem, status: ItemStatus): OutputItem {
    const mapped = toOutputItem(item, status, this.callId)
    const state = this.items.get(item.id)
    if (state) this.state.output[state.index] = mapped
    return mapped
  }

  /** output_item.added (+ content_part.added for a message), then any initial text as a delta. */
  private addItem(item: ThreadItem, emit: (draft: Draft) => void): void {
    const index = this.state.output.length
    const state: ItemState = { index, sent: '', done: false }
    this.items.set(item.id, state)
    const empty = withoutText(item)
    const added = this.snapshot(empty, 'in_progress')
    const shown = added.type === 'message' ? { ...added, content: [] } : added
    emit({ type: 'response.output_item.added', output_index: index, item: shown })
    if (item.type === 'agent_message') {
      emit({
        type: 'response.content_part.added',
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: textPart(''),
      })
    }
    this.sendDelta(item, state, emit)
    this.snapshot(item, 'in_progress')
  }

  private updateItem(item: ThreadItem, emit: (draft: Draft) => void): void {
    const state = this.items.get(item.id)
    if (!state) {
      this.addItem(item, emit)
      return
    }
    if (state.done) return
    this.sendDelta(item, state, emit)
    this.snapshot(item, 'in_progress')
  }

  /** Only the new suffix; a text that is not an extension of what was sent goes out whole. */
  private sendDelta(item: ThreadItem, state: ItemState, emit: (draft: Draft) => void): void {
    const text = streamedText(item)
    if (text === undefined) return
    const delta = text.startsWith(state.sent) ? text.slice(state.sent.length) : text
    state.sent = text
    if (delta === '') return
    emit({
      type: item.type === 'reasoning' ? 'response.reasoning.delta' : 'response.output_text.delta',
      item_id: item.id,
      output_index: state.index,
      content_index: 0,
      delta,
    })
  }

  private completeItem(item: ThreadItem, emit: (draft: Draft) => void): void {
    if (!this.items.has(item.id)) this.addItem(item, emit)
    const state = this.items.get(item.id)!
    if (state.done) return
    this.sendDelta(item, state, emit)
    state.done = true
    const done = this.snapshot(item, completedStatus(item))
    const at = { item_id: item.id, output_index: state.index }
    if (item.type === 'agent_message') {
      emit({ type: 'response.output_text.done', ...at, content_index: 0, text: item.text })
      emit({
        type: 'response.content_part.done',
        ...at,
        content_index: 0,
        part: textPart(item.text),
      })
    } else if (item.type === 'reasoning') {
      emit({ type: 'response.reasoning.done', ...at, content_index: 0, text: item.text })
    } else if (done.type === 'function_call') {
      emit({ type: 'response.function_call_arguments.done', ...at, arguments: done.arguments })
    }
    emit({ type: 'response.output_item.done', output_index: state.index, item: done })
  }
}

/** The item with its streamed text emptied: what `output_item.added` shows. */
function withoutText(item: ThreadItem): ThreadItem {
  switch (item.type) {
    case 'agent_message':
    case 'reasoning':
      return { ...item, text: '' }
    case 'tool_output':
      return { ...item, output: '', spool_path: undefined }
    default:
      return item
  }
}
