import type { ToolCall } from '../../src/contract/history-message.ts'
import type { ModelStreamEvent } from '../../src/ports/model-client.ts'
import { ProviderStreamError } from './model-failure.ts'

type ToolCallDelta = Extract<ModelStreamEvent, { type: 'tool_call_delta' }>

interface PendingCall {
  id: string | undefined
  name: string | undefined
  arguments: string
}

/** Accumulates streamed tool-call fragments by index into complete ToolCalls. */
export class ToolCallAssembler {
  readonly #calls = new Map<number, PendingCall>()

  get size(): number {
    return this.#calls.size
  }

  /** Records a fragment and returns the matching `tool_call_delta` event. */
  add(
    index: number,
    id: string | undefined | null,
    name: string | undefined | null,
    argumentsDelta: string,
  ): ToolCallDelta {
    const call = this.#calls.get(index) ?? { id: undefined, name: undefined, arguments: '' }
    if (id) call.id = id
    if (name && call.name === undefined) call.name = name
    call.arguments += argumentsDelta
    this.#calls.set(index, call)
    return {
      type: 'tool_call_delta',
      index,
      ...(id ? { id } : {}),
      ...(name ? { name } : {}),
      argumentsDelta,
    }
  }

  /** Replaces a call with its authoritative final form (Responses `output_item.done`). */
  settle(index: number, id: string, name: string, args: string): void {
    this.#calls.set(index, { id, name, arguments: args })
  }

  /** The calls in index order; ids are synthesized for servers that send none. */
  finish(): ToolCall[] {
    return [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => {
        if (!call.name) {
          throw new ProviderStreamError(
            `tool call #${index} has no function name`,
            'invalid_tool_call',
            'server',
          )
        }
        return {
          id: call.id ?? `call_${index}_${crypto.randomUUID().replaceAll('-', '')}`,
          name: call.name,
          arguments: call.arguments,
        }
      })
  }
}
