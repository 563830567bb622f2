import type { ModelRequest, ModelResponse } from '../../ports/model-client.ts'
import type { TokenizerLoader } from '../../ports/tokenizer.ts'
import { tokenizerForModel } from '../compaction/bpe-tokenizer.ts'
import { TokenCounter } from '../compaction/token-counter.ts'

/**
 * A response whose provider reported no usage (`usageMissing`: some compatible servers never
 * send it, others only when asked in a way they ignore) gets an estimate instead of zeros, so
 * the turn still counts toward cost, quotas, token guardrails and compaction: the request's
 * messages and tool definitions, and the answer's text, reasoning and tool calls, counted with
 * the model's tokenizer. The response is marked `usageEstimated`.
 */
export async function withEstimatedUsage(
  request: ModelRequest,
  response: ModelResponse,
  loadTokenizer: TokenizerLoader = tokenizerForModel,
): Promise<ModelResponse> {
  if (!response.usageMissing) return response
  const counter = new TokenCounter(await loadTokenizer(request.model))
  const tools = request.tools.length > 0 ? [JSON.stringify(request.tools)] : []
  await counter.warm(request.messages, tools)
  const input = counter.estimate(request.messages, counter.countPrefix(undefined, request.tools))
  const answer = [
    response.text,
    response.reasoning ?? '',
    ...response.toolCalls.flatMap((call) => [call.name, call.arguments]),
  ]
  await counter.warm([], answer)
  const output = answer.reduce((sum, text) => sum + counter.countText(text), 0)
  return {
    ...response,
    usage: {
      input_tokens: input.tokens,
      cached_input_tokens: 0,
      cache_creation_tokens: 0,
      output_tokens: output,
    },
    usageEstimated: true,
  }
}
