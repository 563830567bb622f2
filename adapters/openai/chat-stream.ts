import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import type { ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { deltaPieces, ReasoningBlocks } from './chat-delta.ts'
import { toChatMessage } from './chat-messages.ts'
import { type ChatEndpoint, postChat } from './chat-request.ts'
import { chatChunks } from './chat-sse.ts'
import { type ChatUsageReport, normalizeChatUsage, usageIn } from './chat-usage.ts'
import { ProviderStreamError } from './model-failure.ts'
import { OUTPUT_SCHEMA_NAME } from './output-schema-format.ts'
import { cacheKeyField, cacheKeyHeaders, type ProviderProfile } from './provider-profile.ts'
import { reasoningTokensOf } from './reasoning-tokens.ts'
import { ToolCallAssembler } from './tool-call-assembler.ts'
import { toolChoiceFields } from './tool-choice-fields.ts'

export function chatRequestBody(
  request: ModelRequest,
  profile: ProviderProfile,
): ChatCompletionCreateParamsStreaming {
  return {
    model: request.model,
    messages: request.messages.map((message) => toChatMessage(message, profile)),
    ...requestFields(request, profile),
  }
}

/**
 * `chatRequestBody`'s JSON, byte for byte, with each transcript message's JSON written once per
 * message and provider profile: a session's requests resend the whole transcript, whose
 * messages are the same objects from one request to the next (never changed once made).
 */
export function chatRequestText(request: ModelRequest, profile: ProviderProfile): string {
  let known = messageJsons.get(profile)
  if (known === undefined) {
    known = new WeakMap()
    messageJsons.set(profile, known)
  }
  const messages: string[] = []
  for (const message of request.messages) {
    let json = known.get(message)
    if (json === undefined) {
      json = JSON.stringify(toChatMessage(message, profile))
      known.set(message, json)
    }
    messages.push(json)
  }
  const rest = JSON.stringify(requestFields(request, profile)).slice(1)
  return `{"model":${JSON.stringify(request.model)},"messages":[${messages.join(',')}],${rest}`
}

const messageJsons = new WeakMap<ProviderProfile, WeakMap<HistoryMessage, string>>()

/** The body's members after `model` and `messages`, in the order they are sent. */
function requestFields(
  request: ModelRequest,
  profile: ProviderProfile,
): Omit<ChatCompletionCreateParamsStreaming, 'model' | 'messages'> {
  const tools: ChatCompletionTool[] = request.tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }))
  return {
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0
      ? {
          tools,
          ...toolChoiceFields(request, (name) => ({
            type: 'function' as const,
            function: { name },
          })),
        }
      : {}),
    ...(request.maxOutputTokens === undefined
      ? {}
      : { max_completion_tokens: request.maxOutputTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.topP === undefined ? {} : { top_p: request.topP }),
    ...(request.reasoningEffort === undefined ? {} : { reasoning_effort: request.reasoningEffort }),
    ...cacheKeyField(request, profile),
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

/** Streams one Chat Completions response; the caller owns retries and abort checks. */
export async function* streamChat(
  endpoint: ChatEndpoint,
  request: ModelRequest,
  profile: ProviderProfile,
): AsyncGenerator<ModelStreamEvent> {
  const response = await postChat(
    endpoint,
    chatRequestText(request, profile),
    request.signal,
    cacheKeyHeaders(request, profile),
  )
  let text = ''
  const thoughts = new ReasoningBlocks()
  let finishReason: string | undefined
  let usage: ChatUsageReport | undefined
  const calls = new ToolCallAssembler()

  const named: { responseModel?: string; responseId?: string } = {}
  for await (const chunk of chatChunks(response)) {
    usage = usageIn(chunk) ?? usage
    if (typeof chunk.model === 'string' && chunk.model !== '') named.responseModel = chunk.model
    if (typeof chunk.id === 'string' && chunk.id !== '') named.responseId = chunk.id
    const choice = chunk.choices?.[0]
    if (!choice) continue
    const pieces = deltaPieces((choice.delta ?? {}) as Record<string, unknown>)
    for (const thought of pieces.reasoning) {
      thoughts.add(thought.text, thought.field)
      yield { type: 'reasoning_delta', text: thought.text }
    }
    if (pieces.text !== '') {
      text += pieces.text
      yield { type: 'text_delta', text: pieces.text }
    }
    for (const [position, call] of (choice.delta?.tool_calls ?? []).entries()) {
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
  const counted = usage ? normalizeChatUsage(usage) : undefined
  yield {
    type: 'completed',
    response: {
      text,
      toolCalls: calls.finish(),
      usage: counted?.usage ?? { ...ZERO_USAGE },
      ...(counted ? {} : { usageMissing: true }),
      stopReason: finishReason,
      ...(thoughts.text === ''
        ? {}
        : { reasoning: thoughts.text, reasoningBlocks: thoughts.blocks }),
      ...reasoningTokensOf(counted?.reasoningTokens),
      ...named,
    },
  }
}
