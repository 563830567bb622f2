import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ModelClient, ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { DEMO_LABEL, DEMO_MODEL, demoReply } from './demo-reply.ts'

export { DEMO_LABEL } from './demo-reply.ts'

/** Model name sessions get when the deployment runs the demo model and names no other. */
export const DEMO_MODEL_NAME = DEMO_MODEL

/** Characters per streamed text delta, so the stream looks like one. */
const CHUNK_CHARS = 24

/**
 * The built-in offline demo model: a deterministic ModelClient that needs no network and no key.
 * It is a product feature for a first run without a model, not a language model: it answers
 * (always starting with {@link DEMO_LABEL}), and calls `exec_command`, `read_file`, `write_file`,
 * `apply_patch` and `write_stdin` when a prompt asks for them, so the whole agent loop — tool
 * calls, waits, results, the final answer — can be seen. Usage is estimated from lengths
 * (4 characters a token); it costs nothing and is never sent anywhere.
 */
export function createDemoModelClient(): ModelClient {
  return {
    async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
      request.signal?.throwIfAborted()
      const reply = demoReply(request)
      if (reply.reasoning) yield { type: 'reasoning_delta', text: reply.reasoning }
      for (let at = 0; at < reply.text.length; at += CHUNK_CHARS) {
        yield { type: 'text_delta', text: reply.text.slice(at, at + CHUNK_CHARS) }
      }
      for (const [index, call] of reply.toolCalls.entries()) {
        yield {
          type: 'tool_call_delta',
          index,
          id: call.id,
          name: call.name,
          argumentsDelta: call.arguments,
        }
      }
      const output = reply.text.length + reply.reasoning.length + argsLength(reply.toolCalls)
      yield {
        type: 'completed',
        response: {
          text: reply.text,
          toolCalls: reply.toolCalls,
          reasoning: reply.reasoning,
          stopReason: reply.toolCalls.length > 0 ? 'tool_calls' : 'stop',
          usage: {
            input_tokens: tokens(inputLength(request.messages)),
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: tokens(output),
          },
        },
      }
    },
  }
}

const tokens = (chars: number) => Math.ceil(chars / 4)

function inputLength(messages: readonly HistoryMessage[]): number {
  let chars = 0
  for (const message of messages) {
    chars += message.content.length
    if (message.role === 'assistant') chars += argsLength(message.tool_calls ?? [])
  }
  return chars
}

function argsLength(calls: readonly { name: string; arguments: string }[]): number {
  return calls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0)
}
