import { reportedTokens, type Usage } from '../../src/contract/usage.ts'

/**
 * Usage of a streamed Messages API answer. `message_start` carries the input counts (and a first
 * output count); `message_delta` carries cumulative counts — the output always, and on newer API
 * versions the input and cache counts again: a field given later replaces the earlier one.
 *
 * Anthropic's `input_tokens` counts only the input after the last cache breakpoint; the tokens
 * read from the cache (`cache_read_input_tokens`) and written to it
 * (`cache_creation_input_tokens`) are counted apart. VT Code's usage counts them all in
 * `input_tokens`, with `cached_input_tokens` and `cache_creation_tokens` as parts of it, so each
 * is priced at its own rate (src/core/model/pricing.ts). Thinking tokens are part of
 * `output_tokens`; `output_tokens_details.thinking_tokens` says how many, where the API reports it.
 */
export interface AnthropicUsageReport {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
  output_tokens_details?: { thinking_tokens?: number | null } | null
}

/** `earlier` with every count `later` gives in its place. */
export function mergeUsage(
  earlier: AnthropicUsageReport | undefined,
  later: AnthropicUsageReport | null | undefined,
): AnthropicUsageReport | undefined {
  if (!later) return earlier
  const merged: AnthropicUsageReport = { ...earlier }
  for (const key of [
    'input_tokens',
    'output_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
  ] as const) {
    const value = later[key]
    if (typeof value === 'number') merged[key] = value
  }
  if (typeof later.output_tokens_details?.thinking_tokens === 'number') {
    merged.output_tokens_details = later.output_tokens_details
  }
  return merged
}

const count = reportedTokens

export function normalizeAnthropicUsage(report: AnthropicUsageReport): {
  usage: Usage
  reasoningTokens: number | undefined
} {
  const read = count(report.cache_read_input_tokens)
  const written = count(report.cache_creation_input_tokens)
  const thinking = report.output_tokens_details?.thinking_tokens
  return {
    usage: {
      input_tokens: count(report.input_tokens) + read + written,
      cached_input_tokens: read,
      cache_creation_tokens: written,
      output_tokens: count(report.output_tokens),
    },
    reasoningTokens: typeof thinking === 'number' ? count(thinking) : undefined,
  }
}
