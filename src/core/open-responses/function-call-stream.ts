import type { ThreadItem } from '../../contract/thread-item.ts'
import type { Emit, ItemState } from './bridge-state.ts'
import type { OutputItem } from './types.ts'

/**
 * How a call of one of the client's function tools streams (the specification's "Items are
 * streamable"): `output_item.added` with the `function_call` in progress and empty arguments,
 * the arguments as `function_call_arguments.delta` events as the model writes them, then
 * `function_call_arguments.done` and `output_item.done` with the call `completed` — once the
 * model has finished it, when the response ends waiting on the client. `setOutput` keeps the
 * response's output array in step.
 */
type SetOutput = (index: number, item: OutputItem) => void

export function addCall(
  item: Extract<ThreadItem, { type: 'tool_invocation' }>,
  index: number,
  setOutput: SetOutput,
  emit: Emit,
): ItemState {
  const call = { itemId: item.id, callId: item.tool_call_id ?? item.id, name: item.tool_name }
  const state: ItemState = { index, sent: '', done: false, call }
  const added = callItem(state, 'in_progress', setOutput)
  emit({ type: 'response.output_item.added', output_index: index, item: added })
  sendArguments(item, state, setOutput, emit)
  return state
}

/** The new suffix of the arguments as a delta (the whole text when it is no extension). */
export function sendArguments(
  item: ThreadItem,
  state: ItemState,
  setOutput: SetOutput,
  emit: Emit,
): void {
  if (state.done) return
  const text = argumentsText(item)
  if (text === '' || text === state.sent) return
  const delta = text.startsWith(state.sent) ? text.slice(state.sent.length) : text
  state.sent = text
  emit({
    type: 'response.function_call_arguments.delta',
    item_id: state.call?.itemId ?? item.id,
    output_index: state.index,
    delta,
  })
  callItem(state, 'in_progress', setOutput)
}

export function closeCall(state: ItemState, setOutput: SetOutput, emit: Emit): void {
  state.done = true
  const at = { item_id: state.call?.itemId ?? '', output_index: state.index }
  emit({ type: 'response.function_call_arguments.done', ...at, arguments: state.sent })
  const item = callItem(state, 'completed', setOutput)
  emit({ type: 'response.output_item.done', output_index: state.index, item })
}

function callItem(
  state: ItemState,
  status: 'in_progress' | 'completed',
  setOutput: SetOutput,
): OutputItem {
  const { itemId, callId, name } = state.call ?? { itemId: '', callId: '', name: '' }
  const item: OutputItem = {
    type: 'function_call',
    id: itemId,
    call_id: callId,
    name,
    arguments: state.sent,
    status,
  }
  setOutput(state.index, item)
  return item
}

/** The arguments of an invocation as JSON text (they are kept parsed when they parse exactly). */
function argumentsText(item: ThreadItem): string {
  if (item.type !== 'tool_invocation' || item.arguments === undefined) return ''
  return typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments)
}
