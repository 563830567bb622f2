import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

const TokenCount = lazySchema(() => z.number().int().nonnegative())

/** VT Code Usage: all four fields required on read and on write. */
export const UsageSchema = lazySchema(() =>
  z.object({
    input_tokens: TokenCount.describe('Prompt tokens.'),
    cached_input_tokens: TokenCount.describe("Prompt tokens read from the provider's cache."),
    cache_creation_tokens: TokenCount.describe("Prompt tokens written to the provider's cache."),
    output_tokens: TokenCount.describe('Answer tokens (reasoning included).'),
  }),
)
export type Usage = z.infer<typeof UsageSchema>

export const ZERO_USAGE: Usage = Object.freeze({
  input_tokens: 0,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  output_tokens: 0,
})

/** Field-wise addition, as VT Code aggregates usage. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
    cache_creation_tokens: a.cache_creation_tokens + b.cache_creation_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
  }
}

/** A token count a provider reported: a finite positive number, floored; anything else is 0. */
export function reportedTokens(value: number | null | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0
}
