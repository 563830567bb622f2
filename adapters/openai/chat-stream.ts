import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import type { CompletionUsage } from 'openai/resources/completions'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { Usage } from '../../src/contract/usage.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import type { ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { type ChatEndpoint, postChat } from './chat-request.ts'
import { chatChunks } from './chat-sse.ts'
import { ProviderStreamError } from './model-failure.ts'
import { OUTPUT_SCHEMA_NAME } from './output-schema-format.ts'
import { reasoningTokensOf } from './reasoning-tokens.ts'
import { ToolCallAssembler } from './tool-call-assembler.ts'

export function toChatMessage(message: HistoryMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content }
    case 'user':
      return { role: 'user', content: message.content }
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content }
    case 'assistant': {
      const calls = message.tool_calls ?? []
      if (calls.length === 0) return { role: 'assistant', content: message.content }
      return {
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: call.name, arguments: call.arguments },
        })),
      }
    }
    case 'compaction':
      throw new ProviderStreamError(
        'the transcript holds an OpenAI Responses compaction item, which the Chat Completions API cannot read: use a model with api "responses", or compact the session locally first',
        'unsupported_compaction_item',
        'bad_request',
      )
  }
}

export function chatRequestBody(request: ModelRequest): ChatCompletionCreateParamsStreaming {
  const tools: ChatCompletionTool[] = request.tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }))
  return {
    model: request.model,
    messages: request.messages.map(toChatMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.maxOutputTokens === undefined
      ? {}
      : { max_completion_tokens: request.maxOutputTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.topP === undefined ? {} : { top_p: request.topP }),
    ...(request.reasoningEffort === undefined ? {} : { reasoning_effort: request.reasoningEffort }),
    ...(request.outputSchema === undefined
      ? {}
      : {
          response_format: {
            type: 'json_schema',
            json_schema: { name: OUTPUT_SCHEMA_NAME, schema: request.outputSchema, strict: true },
          },
        }),
  }
}

/** Chat usage → VT Code Usage; prompt_tokens already includes cached tokens. */
export function normalizeChatUsage(usage: CompletionUsage | null | undefined): Usage {
  if (!usage) return { ...ZERO_USAGE }
  return {
    input_tokens: usage.prompt_tokens ?? 0,
    cached_input_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cache_creation_tokens: 0,
    output_tokens: usage.completion_tokens ?? 0,
  }
}

/** Reasoning text of OpenAI-compatible servers (vLLM, DeepSeek: reasoning_content; Ollama: reasoning). */
function reasoningOf(delta: ChatCompletionChunk.Choice.Delta): string {
  const extra = delta as Record<string, unknown>
  const value = extra.reasoning_content ?? extra.reasoning
  return typeof value === 'string' ? value : ''
}

/** Streams one Chat Completions response; the caller owns retries and abort checks. */
export async function* streamChat(
  endpoint: ChatEndpoint,
  request: ModelRequest,
): AsyncGenerator<ModelStreamEvent> {
  const response = await postChat(endpoint, chatRequestBody(request), request.signal)
  let text = ''
  let reasoning = ''
  let finishReason: string | undefined
  let usage: CompletionUsage | undefined
  const calls = new ToolCallAssembler()

  for await (const chunk of chatChunks(response)) {
    if (chunk.usage) usage = chunk.usage
    const choice = chunk.choices[0]
    if (!choice) continue
    const delta = choice.delta ?? {}
    const thought = reasoningOf(delta)
    if (thought !== '') {
      reasoning += thought
      yield { type: 'reasoning_delta', text: thought }
    }
    const piece = (delta.content ?? '') + (delta.refusal ?? '')
    if (piece !== '') {
      text += piece
      yield { type: 'text_delta', text: piece }
    }
    for (const [position, call] of (delta.tool_calls ?? []).entries()) {
      // Some compatible servers omit `index`; fall back to the position in this chunk.
      const index = typeof call.index === 'number' ? call.index : position
      const event = calls.add(index, call.id, call.function?.name, call.function?.arguments ?? '')
      yield event
    }
    if (choice.finish_reason) finishReason = choice.finish_reason
  }

  // The SDK ends the iteration quietly when the request is aborted mid-body.
  request.signal?.throwIfAborted()
  if (finishReason === undefined) {
    throw new ProviderStreamError(
      'stream ended before a finish_reason',
      'stream_truncated',
      'network',
    )
  }
  yield {
    type: 'completed',
    response: {
      text,
      toolCalls: calls.finish(),
      usage: normalizeChatUsage(usage),
      stopReason: finishReason,
      ...(reasoning === '' ? {} : { reasoning }),
      ...reasoningTokensOf(usage?.completion_tokens_details?.reasoning_tokens),
    },
  }
}
