import { exactJsonOrRaw } from '../../contract/exact-json.ts'
import type { ToolCall } from '../../contract/history-message.ts'
import type { JsonValue } from '../../contract/json-value.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { ModelClient, ModelRequest, ModelResponse } from '../../ports/model-client.ts'
import type { EventDispatcher } from '../engine/event-dispatcher.ts'
import { AnswerMessages } from './answer-messages.ts'

/** Streaming snapshots: reasoning every ≥256 new chars (≤64 updates), tool args as VT Code. */
const TEXT_UPDATE_CHARS = 256
const TEXT_MAX_UPDATES = 64
const ARGS_UPDATE_BYTES = 512
const ARGS_MAX_UPDATES = 8

export interface ModelStepContext {
  dispatcher: EventDispatcher
  nextItemId: () => string
  model: ModelClient
  request: ModelRequest
  /** Called between stream events; keeps the session lease alive during long responses. */
  heartbeat?: () => Promise<void>
}

export interface InvokedTool {
  itemId: string
  call: ToolCall
}

export interface ModelStepResult {
  response: ModelResponse
  tools: InvokedTool[]
}

interface CallState {
  itemId: string
  id: string
  name: string
  args: string
  updates: number
  lastUpdateAt: number
}

/**
 * Runs one model request and emits its items: reasoning and the assistant message each as
 * item.started → item.updated snapshots → item.completed, and each tool call as a
 * tool_invocation item.started (in progress) with throttled argument updates. Invocations are
 * completed by the tool loop once their outcome is known.
 * Long: one pass over the stream, whose item snapshots share the running text and calls.
 */
export async function runModelStep(ctx: ModelStepContext): Promise<ModelStepResult> {
  const { dispatcher } = ctx
  const emit = (event: ThreadEvent) => dispatcher.emit(event)
  let reasoning = ''
  let reasoningId: string | undefined
  let reasoningDone = false
  let reasoningUpdates = 0
  let reasoningAtUpdate = 0
  /** The reasoning so far is whitespace only: each delta is checked, never the text so far. */
  let reasoningBlank = true
  const messages = new AnswerMessages(emit, ctx.nextItemId)
  const calls = new Map<number, CallState>()

  /** Reasoning streams as VT Code's: item.started, throttled item.updated snapshots. */
  const streamReasoning = (delta: string) => {
    if (reasoningDone) return
    reasoning += delta
    if (!reasoningId) {
      if (reasoningBlank && delta.trim() === '') return
      reasoningBlank = false
      reasoningId = ctx.nextItemId()
      reasoningAtUpdate = reasoning.length
      emit({ type: 'item.started', item: { id: reasoningId, type: 'reasoning', text: reasoning } })
    } else if (
      reasoning.length - reasoningAtUpdate >= TEXT_UPDATE_CHARS &&
      reasoningUpdates < TEXT_MAX_UPDATES
    ) {
      reasoningUpdates += 1
      reasoningAtUpdate = reasoning.length
      emit({ type: 'item.updated', item: { id: reasoningId, type: 'reasoning', text: reasoning } })
    }
  }
  const flushReasoning = () => {
    if (reasoningDone || reasoningBlank) return
    reasoningDone = true
    emit({
      type: 'item.completed',
      item: { id: reasoningId ?? ctx.nextItemId(), type: 'reasoning', text: reasoning },
    })
  }
  const openCall = (id = '', name = ''): CallState => {
    flushReasoning()
    const state: CallState = {
      itemId: ctx.nextItemId(),
      id,
      name,
      args: '',
      updates: 0,
      lastUpdateAt: 0,
    }
    emit({ type: 'item.started', item: invocation(state) })
    return state
  }
  const startCall = (index: number, id?: string, name?: string): CallState => {
    const state = openCall(id, name)
    calls.set(index, state)
    return state
  }

  let response: ModelResponse | undefined
  try {
    for await (const event of ctx.model.stream(ctx.request)) {
      if (event.type === 'reasoning_delta') {
        streamReasoning(event.text)
      } else if (event.type === 'text_delta') {
        flushReasoning()
        messages.delta(event.text, event.part)
      } else if (event.type === 'tool_call_delta') {
        const state = calls.get(event.index) ?? startCall(event.index, event.id, event.name)
        if (event.id) state.id = event.id
        if (event.name) state.name = event.name
        state.args += event.argumentsDelta
        const first = state.updates === 0 && event.argumentsDelta.length > 0
        const grown = state.args.length - state.lastUpdateAt >= ARGS_UPDATE_BYTES
        if ((first || grown) && state.updates < ARGS_MAX_UPDATES) {
          state.updates += 1
          state.lastUpdateAt = state.args.length
          emit({ type: 'item.updated', item: invocation(state, true) })
        }
      } else {
        response = event.response
      }
      await ctx.heartbeat?.()
    }
  } catch (error) {
    // A stream that fails (or is cancelled) midway leaves no item open: what arrived is
    // completed, and the calls it began are failed — none of them will run.
    flushReasoning()
    messages.abandon()
    for (const state of calls.values()) {
      emit({ type: 'item.completed', item: { ...invocation(state, true), status: 'failed' } })
    }
    throw error
  }
  if (!response) throw new Error('model stream ended without a completed response')

  flushReasoning()
  if (!reasoningDone && response.reasoning) {
    reasoning = response.reasoning
    reasoningBlank = reasoning.trim() === ''
    flushReasoning()
  }
  const finalText = messages.finish(response)
  return {
    response: { ...response, text: finalText },
    tools: matchCalls(response, calls, openCall),
  }
}

/**
 * Each call of the response with the item the stream opened for it: the first item with its id
 * (streamed, or opened here for an earlier call), else the one streamed at its index, else a new
 * item (a call the stream did not show). The items are indexed by call id once, so matching
 * costs the number of calls, not its square (a scan of every item for each call before).
 */
function matchCalls(
  response: ModelResponse,
  calls: Map<number, CallState>,
  openCall: (id: string, name: string) => CallState,
): InvokedTool[] {
  const byId = new Map<string, CallState>()
  const index = (state: CallState) => {
    if (!byId.has(state.id)) byId.set(state.id, state)
  }
  for (const state of calls.values()) index(state)
  return response.toolCalls.map((call, at) => {
    let state = byId.get(call.id) ?? calls.get(at)
    if (!state) {
      state = openCall(call.id, call.name)
      index(state)
    }
    return { itemId: state.itemId, call }
  })
}

function invocation(state: CallState, withArgs = false) {
  return {
    id: state.itemId,
    type: 'tool_invocation' as const,
    tool_name: state.name,
    ...(withArgs ? { arguments: parseLoose(state.args) } : {}),
    ...(state.id ? { tool_call_id: state.id } : {}),
    status: 'in_progress' as const,
  }
}

/** Parsed JSON when it re-encodes to exactly what the model sent, else the raw text. */
export function parseLoose(raw: string): JsonValue {
  return exactJsonOrRaw(raw)
}
