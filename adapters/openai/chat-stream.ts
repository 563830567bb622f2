import { ZERO_USAGE } from '../../src/contract/usage.ts'
import type { ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { deltaPieces, ReasoningBlocks } from './chat-delta.ts'
import { type ChatEndpoint, postChat } from './chat-request.ts'
import { chatRequestText } from './chat-request-body.ts'
import { ChatChunkReader } from './chat-sse.ts'
import { type ChatUsageReport, normalizeChatUsage, usageIn } from './chat-usage.ts'
import { ProviderStreamError } from './model-failure.ts'
import { cacheKeyHeaders, type ProviderProfile } from './provider-profile.ts'
import { reasoningTokensOf } from './reasoning-tokens.ts'
import { ToolCallAssembler } from './tool-call-assembler.ts'

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
  // The chunks of each read of the body are taken in this loop (not through a generator each).
  const reader = new ChatChunkReader(response)
  try {
    for (let chunks = await reader.read(); chunks; chunks = await reader.read()) {
      for (const chunk of chunks) {
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
          yield calls.add(index, call.id, call.function?.name, call.function?.arguments ?? '')
        }
        if (choice.finish_reason) finishReason = choice.finish_reason
      }
    }
  } finally {
    // Stopped early or failed: the rest of the body is not read.
    if (!reader.finished) await reader.cancel()
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
