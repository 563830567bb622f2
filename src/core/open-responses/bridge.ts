import type { ParsedThreadEvent } from '../../contract/thread-event.ts'
import type { ThreadItem } from '../../contract/thread-item.ts'
import { responseEnd } from './answer-format.ts'
import type { BridgeOptions, Emit, ItemState } from './bridge-state.ts'
import { callIdAssigner } from './call-ids.ts'
import { customEventFor } from './custom-events.ts'
import { addCall, closeCall, sendArguments } from './function-call-stream.ts'
import { shownDraft, shownResponse } from './item-ids.ts'
import {
  completedStatus,
  isStandardItem,
  streamedText,
  toOutputItem,
  withoutText,
} from './items.ts'
import {
  DEFAULT_SETTINGS,
  newResponseResource,
  toOpenUsage,
  withReasoning,
} from './response-resource.ts'
import { closeTextPart, openTextPart } from './text-part-events.ts'
import type {
  ExtensionItemStatus,
  OpenUsage,
  OutputItem,
  ResponseError,
  ResponseObject,
  StreamEvent,
} from './types.ts'

/**
 * Maps the ThreadEvents of one response to Open Responses stream events that both the
 * specification's schema and common clients accept (docs/http-api.md lists where this differs
 * from VT Code's bridge and why). It is stateful (sequence numbers, output indexes, items seen,
 * call ids) and pure: feed events in order with `push`, read the response at any point with
 * `response`. The same events always give the same stream, so a stream rebuilt from the stored
 * events (resume) numbers its events exactly as the live one did.
 */
export class OpenResponsesBridge {
  private seq = 0
  private started = false
  private readonly state: ResponseObject
  private readonly items = new Map<string, ItemState>()
  /** The call id of an invocation: its raw tool_call_id on first use, else its item id. */
  private readonly callId = callIdAssigner()
  private readonly now: () => number
  private readonly extensions: boolean
  private readonly clientTools: Set<string>
  /** The usage of a completed turn whose response ends with its thread. */
  private turnUsage: OpenUsage | undefined
  /**
   * The output index of a message whose `output_item.done` waits for the next event: only the
   * end tells whether the answer was cut (`incomplete`), and then the message is the last item.
   */
  private heldDone: number | undefined

  constructor(private readonly options: BridgeOptions) {
    this.now = options.now ?? Date.now
    this.extensions = options.extensions ?? true
    const settings = { ...DEFAULT_SETTINGS, ...options.settings }
    this.clientTools = new Set(settings.tools.map((tool) => tool.name))
    const createdAt = options.createdAt ?? this.seconds()
    this.state = newResponseResource(options.responseId, createdAt, settings)
  }

  /** A copy of the response as it stands (its items with the ids they are shown with). */
  get response(): ResponseObject {
    return shownResponse(this.state, this.options.itemIds)
  }

  /** The Open Responses events for one ThreadEvent (often none). */
  push(event: ParsedThreadEvent): StreamEvent[] {
    const [out, emit] = this.collector()
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
        // A response's thread ends in the same commit, with the model's last stop reason.
        this.turnUsage = toOpenUsage(event.usage)
        if (!this.options.endAtThread) this.complete(undefined, emit)
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
        if (event.type === 'thread.completed' && this.turnUsage) {
          this.complete(event.stop_reason ?? undefined, emit)
        }
        const custom = this.extensions ? customEventFor(event) : undefined
        if (!custom) break
        this.start(emit)
        emit({ type: custom.eventType, response_id: this.state.id, data: custom.data })
      }
    }
    return out
  }

  /**
   * The response ends with the client's function calls (the turn waits for their outputs): each
   * call still open is done, and the response `completed`, as the specification has it.
   */
  awaitClient(usage?: OpenUsage): StreamEvent[] {
    const [out, emit] = this.collector()
    for (const state of this.items.values()) {
      if (state.call && !state.done) closeCall(state, this.setOutput, emit)
    }
    this.finish('completed', usage ?? this.state.usage, null, emit)
    return out
  }

  /** The turn paused, open (the platform's timeout, the quota): `incomplete`, reason `paused`. */
  pause(usage?: OpenUsage): StreamEvent[] {
    const [out, emit] = this.collector()
    if (this.state.status === 'in_progress') this.state.incomplete_details = { reason: 'paused' }
    this.finish('incomplete', usage ?? this.state.usage, null, emit)
    return out
  }

  /** Where events go, numbered as they are emitted. */
  private collector(): [StreamEvent[], Emit] {
    const out: StreamEvent[] = []
    const send: Emit = (draft) => {
      const { type, ...rest } = shownDraft(draft, this.options.itemIds)
      out.push({ type, sequence_number: this.seq++, ...rest } as StreamEvent)
    }
    // Anything sent after a held message's done shows the message was not the end of the
    // response: its done goes first, as it stands (the end sets its status before it ends).
    const emit: Emit = (draft) => {
      const index = this.heldDone
      const item = index === undefined ? undefined : this.state.output[index]
      this.heldDone = undefined
      if (index !== undefined && item) {
        send({
          type: 'response.output_item.done',
          output_index: index,
          item: structuredClone(item),
        })
      }
      send(draft)
    }
    return [out, emit]
  }

  private readonly setOutput = (index: number, item: OutputItem) => {
    this.state.output[index] = item
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000)
  }

  /** response.created + response.in_progress, once, before anything else. */
  private start(emit: Emit): void {
    if (this.started) return
    this.started = true
    emit({ type: 'response.created', response: this.response })
    emit({ type: 'response.in_progress', response: this.response })
  }

  private complete(stopReason: string | undefined, emit: Emit): void {
    const end = responseEnd(this.state.output, this.state.text.format, stopReason)
    const last = this.state.output.at(-1)
    if (end.incomplete && last?.type === 'message') last.status = 'incomplete'
    this.state.incomplete_details = end.incomplete ?? null
    this.finish(end.status, this.turnUsage ?? null, end.error, emit)
  }

  private finish(
    status: 'completed' | 'failed' | 'incomplete',
    usage: OpenUsage | null,
    error: ResponseError | null,
    emit: Emit,
  ): void {
    if (this.state.status !== 'in_progress') return
    this.start(emit)
    this.state.status = status
    this.state.usage = usage && withReasoning(usage, this.options.reasoningTokens?.())
    this.state.error = error
    if (status === 'completed') this.state.completed_at = this.seconds()
    emit({ type: `response.${status}`, response: this.response })
  }

  private snapshot(item: ThreadItem, status: ExtensionItemStatus): OutputItem {
    const mapped = toOutputItem(item, status, this.callId)
    const state = this.items.get(item.id)
    if (state) this.state.output[state.index] = mapped
    return mapped
  }

  /**
   * output_item.added with the item as it starts (no text yet), the content (message) or summary
   * (reasoning) part it streams into, then any initial text as a delta: clients that build text
   * from deltas alone (the AI SDK) would lose a first chunk sent inside the added item.
   */
  private addItem(item: ThreadItem, emit: Emit): void {
    // A call whose name has not streamed yet is added once it has one.
    if (item.type === 'tool_invocation' && item.tool_name === '') return
    if (item.type === 'tool_invocation' && this.clientTools.has(item.tool_name)) {
      const index = this.state.output.length
      this.items.set(item.id, addCall(item, index, this.setOutput, emit))
      return
    }
    if (!this.extensions && !isStandardItem(item)) {
      this.items.set(item.id, { index: -1, sent: '', done: false })
      return
    }
    const index = this.state.output.length
    const state: ItemState = { index, sent: '', done: false }
    this.items.set(item.id, state)
    const added = this.snapshot(withoutText(item), 'in_progress')
    const shown = added.type === 'message' ? { ...added, content: [] } : added
    emit({ type: 'response.output_item.added', output_index: index, item: shown })
    const at = { item_id: item.id, output_index: index }
    openTextPart(item, at, emit)
    this.sendDelta(item, state, emit)
    this.snapshot(item, 'in_progress')
  }

  private updateItem(item: ThreadItem, emit: Emit): void {
    const state = this.items.get(item.id)
    if (!state) {
      this.addItem(item, emit)
      return
    }
    if (state.call) {
      sendArguments(item, state, this.setOutput, emit)
      return
    }
    if (state.done || state.index < 0) return
    this.sendDelta(item, state, emit)
    this.snapshot(item, 'in_progress')
  }

  /** Only the new suffix; a text that is not an extension of what was sent goes out whole. */
  private sendDelta(item: ThreadItem, state: ItemState, emit: Emit): void {
    const text = streamedText(item)
    if (text === undefined) return
    const delta = text.startsWith(state.sent) ? text.slice(state.sent.length) : text
    state.sent = text
    if (delta === '') return
    const at = { item_id: item.id, output_index: state.index }
    if (item.type === 'agent_message') {
      emit({ type: 'response.output_text.delta', ...at, content_index: 0, delta, logprobs: [] })
    } else if (item.type === 'reasoning') {
      emit({ type: 'response.reasoning_summary_text.delta', ...at, summary_index: 0, delta })
    } else {
      emit({ type: 'vtcode:tool_output.delta', ...at, delta })
    }
  }

  private completeItem(item: ThreadItem, emit: Emit): void {
    if (!this.items.has(item.id)) this.addItem(item, emit)
    const state = this.items.get(item.id)
    if (!state) return
    if (state.call) {
      sendArguments(item, state, this.setOutput, emit)
      if (!state.done) closeCall(state, this.setOutput, emit)
      return
    }
    if (state.done || state.index < 0) return
    this.sendDelta(item, state, emit)
    state.done = true
    const done = this.snapshot(item, completedStatus(item))
    const at = { item_id: item.id, output_index: state.index }
    closeTextPart(item, at, emit)
    const open = this.state.status === 'in_progress'
    if (item.type === 'agent_message' && open) this.heldDone = state.index
    else emit({ type: 'response.output_item.done', output_index: state.index, item: done })
  }
}
