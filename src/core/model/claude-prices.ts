/**
 * Anthropic list prices of Claude models in USD per 1M tokens: [input, 5-minute cache write,
 * cache read, output]. Transcribed from the "Pricing" page and the model overview pages of the
 * Claude documentation (state of December 2026; Sonnet 5.5 cache reads at the rate cut of
 * 2026-10-07). Cache writes are priced at the 5-minute rate: the Anthropic adapter's breakpoints
 * carry no `ttl`. Claude Haiku 5.5 and the 5.2 models are left out: Haiku 5.5 bills a prompt
 * over 100K tokens at five times its rate, which one price per token cannot say (a session's
 * `model.price` gives one).
 */
const CLAUDE_PER_MILLION: Readonly<Record<string, readonly [number, number, number, number]>> = {
  'claude-fable-5-1': [10, 12.5, 0.25, 50],
  'claude-mythos-5-1': [10, 12.5, 0.25, 50],
  'claude-fable-5': [10, 12.5, 1, 50],
  'claude-mythos-5': [10, 12.5, 1, 50],
  'claude-opus-5-5': [4, 5, 0.2, 20],
  'claude-opus-5': [5, 6.25, 0.5, 25],
  'claude-opus-4-8': [5, 6.25, 0.5, 25],
  'claude-opus-4-7': [5, 6.25, 0.5, 25],
  'claude-opus-4-6': [5, 6.25, 0.5, 25],
  'claude-opus-4-5': [5, 6.25, 0.5, 25],
  'claude-opus-4-1': [15, 18.75, 1.5, 75],
  'claude-opus-4-0': [15, 18.75, 1.5, 75],
  'claude-sonnet-5-5': [2, 2.5, 0.1, 10],
  'claude-sonnet-5': [2, 2.5, 0.2, 10],
  'claude-sonnet-4-6': [3, 3.75, 0.3, 15],
  'claude-sonnet-4-5': [3, 3.75, 0.3, 15],
  'claude-sonnet-4-0': [3, 3.75, 0.3, 15],
  'claude-3-7-sonnet': [3, 3.75, 0.3, 15],
  'claude-haiku-4-5': [1, 1.25, 0.1, 5],
  'claude-3-5-haiku': [0.8, 1, 0.08, 4],
  'claude-3-haiku': [0.25, 0.3, 0.03, 1.25],
}

/** Older names of the same models. */
const ALIASES: Readonly<Record<string, string>> = {
  'claude-opus-4': 'claude-opus-4-0',
  'claude-sonnet-4': 'claude-sonnet-4-0',
}

/**
 * The Anthropic model id inside a Claude model name as the Messages API, Bedrock and Vertex
 * spell it: `claude-sonnet-4-5-20250929`, `us.anthropic.claude-sonnet-4-5-20250929-v1:0`,
 * `claude-sonnet-4-5@20250929`, `anthropic/claude-sonnet-4.5`, `claude-3-7-sonnet-latest`.
 */
export function claudeModelId(model: string): string {
  const id = model
    .trim()
    .toLowerCase()
    .replace(/^(?:[a-z]{2,6}\.)?anthropic[./]/, '')
    .replace(/\[1m\]$/, '')
    .replace(/-v\d+(?::\d+)?$/, '')
    .replace(/(?:@|-)(?:\d{8}|latest)$/, '')
    .replace(/(\d)\.(\d)/g, '$1-$2')
  return ALIASES[id] ?? id
}

/**
 * USD-per-token price of a Claude model (a `ModelPrice` of pricing.ts), or undefined when it is
 * not a listed one.
 */
export function claudePriceFor(
  model: string,
): { input: number; output: number; cacheRead: number; cacheWrite: number } | undefined {
  const id = claudeModelId(model)
  if (!Object.hasOwn(CLAUDE_PER_MILLION, id)) return undefined
  const row = CLAUDE_PER_MILLION[id]
  if (!row) return undefined
  const [input, cacheWrite, cacheRead, output] = row
  return {
    input: input / 1e6,
    output: output / 1e6,
    cacheRead: cacheRead / 1e6,
    cacheWrite: cacheWrite / 1e6,
  }
}
