import type {
  MessageCreateParamsStreaming,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages'
import { answerOrder } from '../../src/contract/answer-blocks.ts'
import {
  ANSWER_PART_SEPARATOR,
  type AnswerBlockKind,
  type ReasoningBlock,
  type ToolCall,
} from '../../src/contract/history-message.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import type { ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { ProviderStreamError } from '../shared/model-failure.ts'
import { messagesRequestBody } from './messages-request.ts'
import { type AnthropicUsageReport, mergeUsage, normalizeAnthropicUsage } from './messages-usage.ts'

/**
 * What the adapter needs of a client: `messages.create` with `stream: true`, as the SDK's
 * Anthropic, AnthropicBedrock and AnthropicVertex clients all have it.
 */
export interface MessagesEndpoint {
  create(
    body: MessageCreateParamsStreaming,
    options?: { signal?: AbortSignal | undefined },
  ): PromiseLike<AsyncIterable<RawMessageStreamEvent>>
}

type Block =
  | { kind: 'text'; run: number }
  | { kind: 'thinking'; thinking: string; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; id: string; name: string; args: string; input: unknown }
  | { kind: 'other' }

/** Separates the texts of two thinking blocks in the readable reasoning. */
const THINKING_SEPARATOR = '\n\n'

/**
 * Streams one Messages API answer (the SDK parses the SSE; `ping` is skipped and an `error`
 * event is thrown as its APIError): text deltas as text, thinking deltas as reasoning, each
 * `tool_use` block as a tool call (its content-block index is the call's index). Thinking and
 * redacted-thinking blocks are kept whole, signature included, as the answer's reasoning blocks.
 * A stream that ends before `message_stop` is a network fault. The caller owns retries.
 */
export async function* streamMessages(
  endpoint: MessagesEndpoint,
  request: ModelRequest,
): AsyncGenerator<ModelStreamEvent> {
  const events = await endpoint.create(messagesRequestBody(request), {
    signal: request.signal,
  })
  const blocks = new Map<number, Block>()
  /** Texts of the answer's runs of text blocks (a run ends at a thinking or tool block). */
  const runs: string[] = []
  let previous: Block['kind'] | undefined
  let reasoning = ''
  let usage: AnthropicUsageReport | undefined
  let stopReason: string | undefined
  let stopped = false
  const named: { responseModel?: string; responseId?: string } = {}

  for await (const event of events) {
    switch (event.type) {
      case 'message_start':
        usage = mergeUsage(usage, event.message.usage)
        named.responseModel = event.message.model
        named.responseId = event.message.id
        break
      case 'content_block_start': {
        const block = event.content_block
        if (block.type === 'text' && previous !== 'text') runs.push('')
        previous = block.type === 'text' ? 'text' : 'other'
        if (block.type === 'thinking') {
          const state: Block = { kind: 'thinking', thinking: '', signature: block.signature }
          blocks.set(event.index, state)
          if (block.thinking !== '') yield* thought(block.thinking, state)
        } else if (block.type === 'redacted_thinking') {
          blocks.set(event.index, { kind: 'redacted', data: block.data })
        } else if (block.type === 'tool_use') {
          blocks.set(event.index, {
            kind: 'tool',
            id: block.id,
            name: block.name,
            args: '',
            input: block.input,
          })
          yield {
            type: 'tool_call_delta',
            index: event.index,
            id: block.id,
            name: block.name,
            argumentsDelta: '',
          }
        } else if (block.type === 'text') {
          const run = runs.length - 1
          blocks.set(event.index, { kind: 'text', run })
          if (block.text !== '') {
            runs[run] += block.text
            yield { type: 'text_delta', text: block.text, part: run }
          }
        } else {
          blocks.set(event.index, { kind: 'other' })
        }
        break
      }
      case 'content_block_delta': {
        const state = blocks.get(event.index)
        const delta = event.delta
        if (delta.type === 'text_delta') {
          const run = state?.kind === 'text' ? state.run : Math.max(0, runs.length - 1)
          runs[run] = (runs[run] ?? '') + delta.text
          yield { type: 'text_delta', text: delta.text, part: run }
        } else if (delta.type === 'thinking_delta' && state?.kind === 'thinking') {
          yield* thought(delta.thinking, state)
        } else if (delta.type === 'signature_delta' && state?.kind === 'thinking') {
          state.signature += delta.signature
        } else if (delta.type === 'input_json_delta' && state?.kind === 'tool') {
          state.args += delta.partial_json
          if (delta.partial_json !== '') {
            yield {
              type: 'tool_call_delta',
              index: event.index,
              argumentsDelta: delta.partial_json,
            }
          }
        }
        break
      }
      case 'message_delta':
        usage = mergeUsage(usage, event.usage)
        if (event.delta.stop_reason) stopReason = event.delta.stop_reason
        break
      case 'message_stop':
        stopped = true
        break
      default:
        break
    }
  }

  /** One thinking delta: the block's text grows; the readable reasoning streams. */
  function* thought(
    delta: string,
    state: Extract<Block, { kind: 'thinking' }>,
  ): Generator<ModelStreamEvent> {
    const first = state.thinking === ''
    state.thinking += delta
    const lead = reasoning !== '' && first ? THINKING_SEPARATOR : ''
    reasoning += lead + delta
    yield { type: 'reasoning_delta', text: lead + delta }
  }

  // The SDK ends the iteration quietly when the request is aborted mid-body.
  request.signal?.throwIfAborted()
  if (!stopped) {
    throw new ProviderStreamError('stream ended before message_stop', 'stream_truncated', 'network')
  }
  const counted = usage ? normalizeAnthropicUsage(usage) : undefined
  const reasoningBlocks = answerReasoning(blocks)
  const order = answerOrder(blockKinds(blocks))
  yield {
    type: 'completed',
    response: {
      text: runs.join(ANSWER_PART_SEPARATOR),
      ...(runs.length > 1 ? { parts: runs.map((text) => ({ text })) } : {}),
      ...(order ? { order } : {}),
      toolCalls: answerCalls(blocks),
      usage: counted?.usage ?? { ...ZERO_USAGE },
      ...(stopReason === undefined ? {} : { stopReason: stopReasonOf(stopReason) }),
      ...(reasoning === '' ? {} : { reasoning }),
      ...(reasoningBlocks.length > 0 ? { reasoningBlocks } : {}),
      ...(counted?.reasoningTokens === undefined
        ? {}
        : { reasoningTokens: counted.reasoningTokens }),
      ...named,
    },
  }
}

/**
 * The kind of each block of the answer, in the API's order: thinking and redacted thinking are
 * reasoning, a run of text blocks one text, a tool use a tool call (`answerOrder`).
 */
function blockKinds(blocks: Map<number, Block>): AnswerBlockKind[] {
  const kinds: AnswerBlockKind[] = []
  let previous: Block['kind'] | undefined
  for (const [, block] of [...blocks].sort(([a], [b]) => a - b)) {
    if (block.kind === 'thinking' || (block.kind === 'redacted' && block.data !== '')) {
      kinds.push('reasoning')
    } else if (block.kind === 'tool') {
      kinds.push('tool_call')
    } else if (block.kind === 'text' && previous !== 'text') {
      kinds.push('text')
    }
    previous = block.kind
  }
  return kinds
}

/** The answer's thinking and redacted-thinking blocks, in their order. */
function answerReasoning(blocks: Map<number, Block>): ReasoningBlock[] {
  const reasoning: ReasoningBlock[] = []
  for (const [, block] of [...blocks].sort(([a], [b]) => a - b)) {
    if (block.kind === 'thinking') {
      reasoning.push({
        type: 'anthropic_thinking',
        thinking: block.thinking,
        signature: block.signature,
      })
    } else if (block.kind === 'redacted' && block.data !== '') {
      reasoning.push({ type: 'anthropic_redacted_thinking', data: block.data })
    }
  }
  return reasoning
}

/** The answer's tool calls, in their order; a call with no streamed input has its start input. */
function answerCalls(blocks: Map<number, Block>): ToolCall[] {
  const calls: ToolCall[] = []
  for (const [, block] of [...blocks].sort(([a], [b]) => a - b)) {
    if (block.kind !== 'tool') continue
    const args = block.args !== '' ? block.args : JSON.stringify(block.input ?? {})
    calls.push({ id: block.id, name: block.name, arguments: args })
  }
  return calls
}

/**
 * The stop reason as the engine reads it (src/core/model/stop-reason.ts): an answer the context
 * window cut (`model_context_window_exceeded`) ended like one `max_tokens` cut.
 */
function stopReasonOf(reason: string): string {
  return reason === 'model_context_window_exceeded' ? 'max_tokens' : reason
}
