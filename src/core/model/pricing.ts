import type { Usage } from '../../contract/usage.ts'
import { claudePriceFor } from './claude-prices.ts'

/** Model price in USD per token (VT Code's catalog unit, e.g. `input: 2.5e-6`). */
export interface ModelPrice {
  input: number
  output: number
  /** Price of a cached input token; absent when the provider publishes none (then `input`). */
  cacheRead?: number
  /** Price of an input token written to the cache (Anthropic); absent → `input`. */
  cacheWrite?: number
}

/** Per-deployment prices by model id (USD per token); they win over the built-in table. */
export type PriceOverrides = Readonly<Record<string, ModelPrice>>

/**
 * OpenAI standard-tier list prices in USD per 1M tokens: [input, cached input | null, output].
 * Transcribed from OpenAI's published price list (state of late 2026); deployments with other
 * rates, or other providers, pass overrides. gpt-tokenizer 4.0.0 ships a model catalog, but its
 * prices are wrong for current models (gpt-4o, gpt-4.1 and gpt-5 all at $10/$30) or missing
 * (gpt-4o-mini, gpt-5-mini, gpt-5.x), so it is not used here.
 */
const PER_MILLION: Readonly<Record<string, readonly [number, number | null, number]>> = {
  'gpt-5.5': [5, 0.5, 30],
  'gpt-5.5-pro': [30, null, 180],
  'gpt-5.4': [2.5, 0.25, 15],
  'gpt-5.4-mini': [0.75, 0.075, 4.5],
  'gpt-5.4-nano': [0.2, 0.02, 1.25],
  'gpt-5.4-pro': [30, null, 180],
  'gpt-5.3-codex': [1.75, 0.175, 14],
  'gpt-5.2': [1.75, 0.175, 14],
  'gpt-5.2-chat-latest': [1.75, 0.175, 14],
  'gpt-5.2-codex': [1.75, 0.175, 14],
  'gpt-5.2-pro': [21, null, 168],
  'gpt-5.1': [1.25, 0.125, 10],
  'gpt-5.1-chat-latest': [1.25, 0.125, 10],
  'gpt-5.1-codex': [1.25, 0.125, 10],
  'gpt-5.1-codex-max': [1.25, 0.125, 10],
  'gpt-5.1-codex-mini': [0.25, 0.025, 2],
  'gpt-5': [1.25, 0.125, 10],
  'gpt-5-chat-latest': [1.25, 0.125, 10],
  'gpt-5-codex': [1.25, 0.125, 10],
  'gpt-5-mini': [0.25, 0.025, 2],
  'gpt-5-nano': [0.05, 0.005, 0.4],
  'gpt-5-pro': [15, null, 120],
  'gpt-4.1': [2, 0.5, 8],
  'gpt-4.1-mini': [0.4, 0.1, 1.6],
  'gpt-4.1-nano': [0.1, 0.025, 0.4],
  'gpt-4o': [2.5, 1.25, 10],
  'gpt-4o-2024-05-13': [5, null, 15],
  'gpt-4o-mini': [0.15, 0.075, 0.6],
  o1: [15, 7.5, 60],
  'o1-pro': [150, null, 600],
  o3: [2, 0.5, 8],
  'o3-pro': [20, null, 80],
  'o3-mini': [1.1, 0.55, 4.4],
  'o4-mini': [1.1, 0.275, 4.4],
  'o3-deep-research': [10, 2.5, 40],
  'o4-mini-deep-research': [2, 0.5, 8],
  'codex-mini-latest': [1.5, 0.375, 6],
  'gpt-4-turbo': [10, null, 30],
  'gpt-3.5-turbo': [0.5, null, 1.5],
}

const DATE_SUFFIX = /-\d{4}-\d{2}-\d{2}$/
const PROVIDER_PREFIX = /^openai\//

/** Exact id first, then without an `openai/` prefix, then without a dated snapshot suffix. */
function candidates(model: string): string[] {
  const id = model.trim().toLowerCase()
  const bare = id.replace(PROVIDER_PREFIX, '')
  return [...new Set([id, bare, bare.replace(DATE_SUFFIX, '')])]
}

function fromTable(id: string): ModelPrice | undefined {
  if (!Object.hasOwn(PER_MILLION, id)) return undefined
  const row = PER_MILLION[id]
  if (!row) return undefined
  const [input, cached, output] = row
  return {
    input: input / 1e6,
    output: output / 1e6,
    ...(cached === null ? {} : { cacheRead: cached / 1e6 }),
  }
}

/**
 * USD-per-token price of a model, or undefined when unknown (then budgets are not enforced and
 * no cost is reported, as in VT Code). Overrides are matched like the table, and win over it;
 * Claude models are priced from claude-prices.ts.
 */
export function priceFor(model: string, overrides?: PriceOverrides): ModelPrice | undefined {
  const ids = candidates(model)
  if (overrides) {
    const lowered = new Map(Object.entries(overrides).map(([k, v]) => [k.trim().toLowerCase(), v]))
    for (const id of ids) {
      const price = lowered.get(id)
      if (price) return price
    }
  }
  for (const id of ids) {
    const price = fromTable(id)
    if (price) return price
  }
  return claudePriceFor(model)
}

/**
 * The cost of one response as the provider bills it: uncached input at the input price, input
 * read from the prompt cache at the cached price (`cacheRead`, else the input price), input
 * written to the cache at `cacheWrite` (else the input price), output at the output price. Used
 * for `total_cost_usd`, the session budget and the tenants' cost quotas. (VT Code's raw_usd
 * gives no cache discount; where a provider caches, that overstates what it bills by up to
 * 90 % of the cached input.)
 */
export function estimateCostUsd(usage: Usage, price: ModelPrice): number {
  const cached = Math.min(usage.cached_input_tokens, usage.input_tokens)
  const creation = Math.min(usage.cache_creation_tokens, usage.input_tokens - cached)
  const uncached = usage.input_tokens - cached - creation
  return (
    uncached * price.input +
    cached * (price.cacheRead ?? price.input) +
    creation * (price.cacheWrite ?? price.input) +
    usage.output_tokens * price.output
  )
}
