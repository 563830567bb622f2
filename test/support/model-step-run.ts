import type { ToolCall } from '../../src/contract/history-message.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import { EventDispatcher } from '../../src/core/engine/event-dispatcher.ts'
import { runModelStep } from '../../src/core/model/model-step.ts'
import type { ModelClient, ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'

/** A model whose stream is exactly `events`. */
export function scriptedStream(events: ModelStreamEvent[]): ModelClient {
  return {
    async *stream() {
      yield* events
    },
  } as unknown as ModelClient
}

/** The model's completed response event with `calls` and no text. */
export const completedWithCalls = (calls: ToolCall[]): ModelStreamEvent => ({
  type: 'completed',
  response: { text: '', toolCalls: calls, usage: { ...ZERO_USAGE }, stopReason: 'tool_calls' },
})

/** One model step over `events` (items `item_0`, `item_1` …): its result and the events emitted. */
export async function stepOver(events: ModelStreamEvent[]) {
  let next = 0
  const dispatcher = new EventDispatcher(0)
  const result = await runModelStep({
    dispatcher,
    nextItemId: () => `item_${next++}`,
    model: scriptedStream(events),
    request: {} as ModelRequest,
  })
  return { result, events: dispatcher.take() }
}
