import { reportedTokens, type Usage } from '../../src/contract/usage.ts'

/**
 * Usage of a streamed Chat Completions answer, wherever the provider puts it, normalized to VT
 * Code's Usage (input_tokens counts cached tokens too).
 *
 * Where it comes: a last chunk with empty `choices` (OpenAI, Azure, DeepSeek, Qwen, Ollama,
 * vLLM with `stream_options.include_usage`), the chunk that carries `finish_reason` (Mistral,
 * OpenRouter), every chunk with running totals (vLLM `continuous_usage_stats`), inside the choice
 * (Moonshot), or in Groq's `x_groq` extension. The last report wins: each is cumulative.
 *
 * Cached input: `prompt_tokens_details.cached_tokens` (OpenAI, Azure, Mistral, xAI, Qwen, Groq,
 * OpenRouter, vLLM), DeepSeek's `prompt_cache_hit_tokens`, Moonshot's top-level `cached_tokens`.
 * Input written to a cache (billed above the input price where the model behind is Claude):
 * OpenRouter's `prompt_tokens_details.cache_write_tokens`.
 *
 * Reasoning tokens: counted in `completion_tokens` by OpenAI, but not by xAI, whose
 * `total_tokens` shows them (`completion_tokens_details.reasoning_tokens` beside): when the total
 * exceeds prompt + completion by the reasoning count, they are added to the output.
 */
export interface ChatUsageReport {
  prompt_tokens?: number | null
  completion_tokens?: number | null
  total_tokens?: number | null
  prompt_tokens_details?: {
    cached_tokens?: number | null
    cache_write_tokens?: number | null
  } | null
  completion_tokens_details?: { reasoning_tokens?: number | null } | null
  prompt_cache_hit_tokens?: number | null
  cached_tokens?: number | null
}

/** The usage report a chunk carries, if any (top level, in its first choice, or in `x_groq`). */
export function usageIn(chunk: unknown): ChatUsageReport | undefined {
  if (typeof chunk !== 'object' || chunk === null) return undefined
  const record = chunk as {
    usage?: unknown
    choices?: { usage?: unknown }[]
    x_groq?: { usage?: unknown }
  }
  return report(record.usage) ?? report(record.choices?.[0]?.usage) ?? report(record.x_groq?.usage)
}

function report(value: unknown): ChatUsageReport | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const usage = value as ChatUsageReport
  return typeof usage.prompt_tokens === 'number' || typeof usage.completion_tokens === 'number'
    ? usage
    : undefined
}

const count = reportedTokens

/** VT Code Usage of a report, and the reasoning tokens it names (within the output). */
export function normalizeChatUsage(usage: ChatUsageReport): {
  usage: Usage
  reasoningTokens: number | undefined
} {
  const input = count(usage.prompt_tokens)
  let output = count(usage.completion_tokens)
  const reasoning = usage.completion_tokens_details?.reasoning_tokens
  const reasoningTokens = typeof reasoning === 'number' ? count(reasoning) : undefined
  const total = count(usage.total_tokens)
  if (reasoningTokens && total >= input + output + reasoningTokens) output += reasoningTokens
  const cached =
    count(usage.prompt_tokens_details?.cached_tokens) ||
    count(usage.prompt_cache_hit_tokens) ||
    count(usage.cached_tokens)
  const readTokens = Math.min(cached, input)
  const written = count(usage.prompt_tokens_details?.cache_write_tokens)
  return {
    usage: {
      input_tokens: input,
      cached_input_tokens: readTokens,
      cache_creation_tokens: Math.min(written, input - readTokens),
      output_tokens: output,
    },
    reasoningTokens,
  }
}
