import type OpenAI from 'openai'
import type {
  Response,
  ResponseOutputItem,
  ResponseUsage,
} from 'openai/resources/responses/responses'
import { answerOrder } from '../../src/contract/answer-blocks.ts'
import {
  ANSWER_PART_SEPARATOR,
  type AnswerBlockKind,
  type AnswerPart,
  type ReasoningBlock,
} from '../../src/contract/history-message.ts'
import type { Usage } from '../../src/contract/usage.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import type { ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { ProviderStreamError } from './model-failure.ts'
import { cacheKeyHeaders, type ProviderProfile } from './provider-profile.ts'
import { reasoningTokensOf } from './reasoning-tokens.ts'
import { responsesRequestBody } from './responses-request.ts'
import { ToolCallAssembler } from './tool-call-assembler.ts'

export function normalizeResponsesUsage(usage: ResponseUsage | null | undefined): Usage {
  if (!usage) return { ...ZERO_USAGE }
  return {
    input_tokens: usage.input_tokens ?? 0,
    cached_input_tokens: usage.input_tokens_details?.cached_tokens ?? 0,
    cache_creation_tokens: 0,
    output_tokens: usage.output_tokens ?? 0,
  }
}

/** Maps status/incomplete_details onto Chat-style finish reasons. */
export function responsesStopReason(response: Response, hasToolCalls: boolean): string {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason
    if (reason === 'max_output_tokens') return 'length'
    return reason ?? 'incomplete'
  }
  if (response.status === undefined || response.status === 'completed') {
    return hasToolCalls ? 'tool_calls' : 'stop'
  }
  return response.status
}

/**
 * The answer's message items and reasoning items, and the order of its items, from the final
 * response's output (the provider's own account), else from the items the stream completed.
 */
function answerOf(
  final: Response,
  done: Map<number, ResponseOutputItem>,
): { parts: AnswerPart[]; reasoning: ReasoningBlock[]; kinds: AnswerBlockKind[] } {
  const output = final.output?.length
    ? final.output
    : [...done.entries()].sort(([a], [b]) => a - b).map(([, item]) => item)
  const parts: AnswerPart[] = []
  const reasoning: ReasoningBlock[] = []
  const kinds: AnswerBlockKind[] = []
  for (const item of output) {
    if (item.type === 'function_call') kinds.push('tool_call')
    if (item.type === 'message') {
      kinds.push('text')
      let text = ''
      for (const part of item.content)
        text += part.type === 'output_text' ? part.text : part.refusal
      const phase = (item as { phase?: string | null }).phase
      parts.push({
        text,
        ...(phase === 'commentary' || phase === 'final_answer' ? { phase } : {}),
      })
    } else if (item.type === 'reasoning') {
      kinds.push('reasoning')
      reasoning.push({
        type: 'openai_reasoning',
        id: item.id,
        summary: item.summary.map((part) => part.text),
        ...(item.content?.length ? { content: item.content.map((part) => part.text) } : {}),
        ...(item.encrypted_content ? { encrypted_content: item.encrypted_content } : {}),
      })
    }
  }
  return { parts, reasoning, kinds }
}

/** Streams one Responses API response; the caller owns retries and abort checks. */
export async function* streamResponses(
  client: OpenAI,
  request: ModelRequest,
  profile: ProviderProfile,
): AsyncGenerator<ModelStreamEvent> {
  const stream = await client.responses.create(responsesRequestBody(request, profile), {
    ...(request.signal ? { signal: request.signal } : {}),
    headers: cacheKeyHeaders(request, profile),
  })
  let reasoning = ''
  let final: Response | undefined
  const calls = new ToolCallAssembler()
  const callIndexByOutput = new Map<number, number>()
  const done = new Map<number, ResponseOutputItem>()

  for await (const event of stream) {
    switch (event.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        yield { type: 'text_delta', text: event.delta, part: event.output_index }
        break
      case 'response.reasoning_summary_part.added':
        // Summary parts are paragraphs: the second and later start after a blank line.
        if (reasoning !== '') {
          reasoning += '\n\n'
          yield { type: 'reasoning_delta', text: '\n\n' }
        }
        break
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        reasoning += event.delta
        yield { type: 'reasoning_delta', text: event.delta }
        break
      case 'response.output_item.added':
        if (event.item.type === 'function_call') {
          const index = calls.size
          callIndexByOutput.set(event.output_index, index)
          yield calls.add(index, event.item.call_id, event.item.name, event.item.arguments ?? '')
        }
        break
      case 'response.function_call_arguments.delta': {
        const index = callIndexByOutput.get(event.output_index)
        if (index !== undefined) yield calls.add(index, undefined, undefined, event.delta)
        break
      }
      case 'response.output_item.done':
        done.set(event.output_index, event.item)
        if (event.item.type === 'function_call') {
          const index = callIndexByOutput.get(event.output_index) ?? calls.size
          callIndexByOutput.set(event.output_index, index)
          calls.settle(index, event.item.call_id, event.item.name, event.item.arguments)
        }
        break
      case 'response.completed':
      case 'response.incomplete':
        final = event.response
        break
      case 'response.failed': {
        const error = event.response.error
        throw new ProviderStreamError(error?.message ?? 'response failed', error?.code)
      }
      case 'error':
        throw new ProviderStreamError(event.message, event.code)
    }
  }

  // The SDK ends the iteration quietly when the request is aborted mid-body.
  request.signal?.throwIfAborted()
  if (final === undefined) {
    throw new ProviderStreamError(
      'stream ended before response.completed',
      'stream_truncated',
      'network',
    )
  }
  const toolCalls = calls.finish()
  const answer = answerOf(final, done)
  const several = answer.parts.length > 1 || answer.parts.some((part) => part.phase)
  const order = answerOrder(answer.kinds)
  const readable =
    reasoning ||
    answer.reasoning
      .flatMap((block) => (block.type === 'openai_reasoning' ? block.summary : []))
      .join('\n\n')
  yield {
    type: 'completed',
    response: {
      text: answer.parts.map((part) => part.text).join(ANSWER_PART_SEPARATOR),
      toolCalls,
      usage: normalizeResponsesUsage(final.usage),
      ...(final.usage ? {} : { usageMissing: true }),
      stopReason: responsesStopReason(final, toolCalls.length > 0),
      ...(several ? { parts: answer.parts } : {}),
      ...(order ? { order } : {}),
      ...(readable === '' ? {} : { reasoning: readable }),
      ...(answer.reasoning.length > 0 ? { reasoningBlocks: answer.reasoning } : {}),
      ...reasoningTokensOf(final.usage?.output_tokens_details?.reasoning_tokens),
      ...(final.model ? { responseModel: final.model } : {}),
      ...(final.id ? { responseId: final.id } : {}),
    },
  }
}
