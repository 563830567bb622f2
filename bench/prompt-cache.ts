/**
 * The cached share of input tokens over a multi-turn session, for each way providers key their
 * prompt cache and report cached tokens.
 *
 * Workload: per provider family, one session of T turns (default 20) through the real engine
 * (SessionService on the memory adapters) and the real OpenAI-compatible adapter configured for
 * that provider, against a mock provider with a prompt cache (bench/support/caching-provider.ts:
 * routed by the cache key the adapter sends, else by prefix; usage in that provider's shape);
 * and Claude through the Anthropic adapter against the mock Messages API
 * (test/support/mock-anthropic.ts), which caches at the adapter's `cache_control` breakpoints
 * as Anthropic does (prefixes under 1,024 tokens not cached; writes priced at 1.25 × input).
 * Every turn is a user message and an answer, so the transcript grows behind the frozen request
 * segment (system prompt, instructions, tool catalog).
 *
 * Prints, per family: what routes the cache, input tokens, cached input tokens and their share,
 * the session's cost as Turnline charges it (at an illustrative $1 input, $0.10 cached input, $4
 * output per 1M tokens) and what it would be without the cache discount. Figures, not pass/fail.
 *
 *   npm run bench:prompt-cache -- [--turns 20]
 */
import { parseArgs } from 'node:util'
import { createAnthropicModelClient } from '../adapters/anthropic/anthropic-model-client.ts'
import { MemoryObjectStore } from '../adapters/memory/memory-object-store.ts'
import { createOpenAIModelClient } from '../adapters/openai/openai-model-client.ts'
import {
  type OpenAICompatibleProvider,
  providerProfile,
} from '../adapters/openai/provider-profile.ts'
import type { ModelApi } from '../src/contract/model-config.ts'
import { SessionService } from '../src/core/session-service.ts'
import type { ModelClient } from '../src/ports/model-client.ts'
import { engineDeps } from '../test/support/engine-deps.ts'
import { startMockAnthropic } from '../test/support/mock-anthropic.ts'
import { startCachingProvider, type UsageShape } from './support/caching-provider.ts'

const { values } = parseArgs({ options: { turns: { type: 'string', default: '20' } } })
const TURNS = Number(values.turns)
const PRICE = { input: 1e-6, cached_input: 0.1e-6, output: 4e-6 }
/** Anthropic bills cache writes (5-minute) at 1.25 × input. */
const CLAUDE_PRICE = { ...PRICE, cache_write: 1.25e-6 }

interface Family {
  label: string
  provider: OpenAICompatibleProvider
  api: 'chat' | 'responses'
  shape: UsageShape
}

const FAMILIES: Family[] = [
  { label: 'OpenAI Chat', provider: 'openai', api: 'chat', shape: 'openai' },
  { label: 'OpenAI Responses', provider: 'openai', api: 'responses', shape: 'responses' },
  { label: 'Azure OpenAI', provider: 'azure', api: 'chat', shape: 'openai' },
  { label: 'xAI', provider: 'xai', api: 'chat', shape: 'xai' },
  { label: 'Mistral', provider: 'mistral', api: 'chat', shape: 'mistral' },
  { label: 'DeepSeek', provider: 'deepseek', api: 'chat', shape: 'deepseek' },
  { label: 'Moonshot / Kimi', provider: 'moonshot', api: 'chat', shape: 'moonshot' },
  { label: 'Qwen', provider: 'qwen', api: 'chat', shape: 'openai' },
  { label: 'Groq', provider: 'groq', api: 'chat', shape: 'groq' },
  { label: 'OpenRouter', provider: 'openrouter', api: 'chat', shape: 'openrouter' },
  { label: 'generic', provider: 'generic', api: 'chat', shape: 'openai' },
]

const ROUTES = {
  prompt_cache_key: 'prompt_cache_key',
  'x-grok-conv-id': 'x-grok-conv-id header',
  none: 'prefix only',
} as const

/** A user message of a working session: a few lines of context each turn. */
const input = (turn: number) =>
  `Step ${turn}: update src/module-${turn}.ts so that parseConfig accepts the new "retries" ` +
  `field, keep the old behaviour when it is missing, and run the tests of that module. ` +
  `The failing output was:\n  expected 3 to be 2 // module-${turn}.test.ts:${40 + turn}`

/** One session of TURNS turns on `model`: its row of the table. */
async function sessionRow(
  label: string,
  route: string,
  model: ModelClient,
  settings: { api: ModelApi; price: typeof PRICE },
): Promise<string[]> {
  const deps = engineDeps(
    { store: new MemoryObjectStore(), model, fetch: (...args) => fetch(...args) },
    [],
  )
  const service = new SessionService(deps)
  const { session_id } = await service.createSession('bench', {
    model: { name: 'bench-model', ...settings },
    instructions: 'You are a careful coding agent. Make small, tested changes.',
  })
  for (let turn = 1; turn <= TURNS; turn++) {
    const outcome = await service.stepTurn('bench', session_id, { input: input(turn) })
    if (outcome.status !== 'completed') throw new Error(`${label}: ${outcome.status}`)
  }
  const view = await service.getSession('bench', session_id)
  const { input_tokens, cached_input_tokens, output_tokens } = view.usage
  const undiscounted = input_tokens * PRICE.input + output_tokens * PRICE.output
  return [
    label,
    route,
    String(input_tokens),
    String(cached_input_tokens),
    `${((100 * cached_input_tokens) / input_tokens).toFixed(1)} %`,
    `$${(view.total_cost_usd ?? 0).toFixed(5)}`,
    `$${undiscounted.toFixed(5)}`,
  ]
}

const provider = await startCachingProvider()
const claude = await startMockAnthropic({ cacheMinimumTokens: 1_024 })
claude.respond(() => ({ text: 'Done: parseConfig accepts "retries" and the tests pass.' }))
const rows: string[][] = []
try {
  for (const family of FAMILIES) {
    provider.play(family.shape)
    const model = createOpenAIModelClient({
      baseURL: provider.baseURL,
      apiKey: 'bench',
      provider: family.provider,
    })
    const route = ROUTES[providerProfile(family.provider).cacheKey]
    rows.push(await sessionRow(family.label, route, model, { api: family.api, price: PRICE }))
  }
  const messages = createAnthropicModelClient({ baseURL: claude.baseURL, apiKey: 'bench' })
  rows.push(
    await sessionRow('Anthropic', 'cache_control breakpoints', messages, {
      api: 'anthropic',
      price: CLAUDE_PRICE,
    }),
  )
} finally {
  await provider.close()
  await claude.close()
}

const header = ['family', 'cache routed by', 'input', 'cached', 'share', 'cost', 'no discount']
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)))
const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')
console.log(`${TURNS} turns per session, one request per turn\n`)
console.log(line(header))
for (const row of rows) console.log(line(row))
