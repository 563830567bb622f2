import { expect } from 'vitest'
import type { OpenAICompatibleProvider } from '../../../adapters/openai/provider-profile.ts'
import { messageReply } from '../anthropic-frames.ts'
import {
  type CaseExpectation,
  chatChunk,
  chunkOf,
  end,
  type ProviderCase,
  toolCall,
} from '../provider-case.ts'
import type { ReplayFrame } from '../provider-replay.ts'
import { MOONSHOT_MODEL, moonshotLastChunk } from './moonshot.ts'
import { responsesStream } from './responses-frames.ts'

/**
 * Prompt caching, family by family: the cache key each provider routes by (or none where it
 * caches by prefix alone or refuses unknown fields), stable over a session's requests; cached
 * input read from the field each provider reports it in; and the session cost charging it at the
 * cached rate (cache writes at the cache-write rate).
 *
 * Sources: OpenAI "Prompt caching" guide (`prompt_cache_key` on Chat and Responses;
 * `prompt_tokens_details.cached_tokens`, `input_tokens_details.cached_tokens`); docs.x.ai
 * "Prompt caching" (the `x-grok-conv-id` header; `prompt_tokens_details.cached_tokens`);
 * docs.mistral.ai "Prompt caching" (`prompt_cache_key`; `prompt_tokens_details.cached_tokens`;
 * cached input at 10 % of the input price); DeepSeek "Context Caching" guide
 * (`prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`, no key); Kimi "Streaming" guide
 * (`cached_tokens` at the top of the usage inside the choice); OpenRouter "Usage Accounting"
 * (`prompt_tokens_details.cached_tokens` and `cache_write_tokens`); console.groq.com "Prompt
 * caching" (automatic; `prompt_tokens_details.cached_tokens`, here in `x_groq.usage`); Anthropic
 * "Prompt caching" (`cache_read_input_tokens` and `cache_creation_input_tokens` beside
 * `input_tokens`; writes at 1.25× and reads at 0.1× the input price).
 */

const KEY = /^turnline-[0-9a-f]{16}$/
type PerMillion = [input: number, output: number, cached?: number, write?: number]
const perMillion = (...[input, output, cached, write]: PerMillion) => ({
  input: input / 1e6,
  output: output / 1e6,
  ...(cached === undefined ? {} : { cached_input: cached / 1e6 }),
  ...(write === undefined ? {} : { cache_write: write / 1e6 }),
})

/** The cache key of a session's first request, to compare later turns' against. */
let firstKey: unknown

const gpt5 = 'gpt-5.4'
const responsesTurn = (id: string, text: string, input: number, cached: number) => ({
  frames: responsesStream(gpt5, [{ type: 'message', id, text }], {
    input_tokens: input,
    cached_tokens: cached,
    output_tokens: 10,
  }),
})

const xai = chunkOf('grok-4-fast', { id: 'c2b1a9e0-xai', system_fingerprint: 'fp_6ca3f4b5c6' })
const xaiUsage = (prompt: number, cached: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  prompt_tokens_details: { text_tokens: prompt, cached_tokens: cached },
})

const mistral = chunkOf('mistral-medium-latest', { id: 'f798ebd5c41a45d88bb079635121cade' })
const deepseek = chunkOf('deepseek-chat', { system_fingerprint: 'fp_ffc7281d48_prod0820' })
const openrouter = chunkOf('anthropic/claude-sonnet-4.5', { id: 'gen-1760000000-cc' })
const groq = chunkOf('openai/gpt-oss-120b', { id: 'chatcmpl-groq-8d2' })

const noKey = (requests: Record<string, unknown>[], headers: Record<string, string>[]) => {
  for (const request of requests) expect(request).not.toHaveProperty('prompt_cache_key')
  for (const header of headers) expect(header).not.toHaveProperty('x-grok-conv-id')
}

/**
 * A one-turn case: "Hi" answered "Hello." in `frames`, with `usage` as [input, cached, written,
 * output] and the session's cost checked at `price` (USD per 1M tokens).
 */
function helloCase(c: {
  name: string
  source: string
  provider: OpenAICompatibleProvider
  model: string
  price: PerMillion
  frames: ReplayFrame[]
  usage: [number, number, number, number]
  check: NonNullable<CaseExpectation['check']>
  session?: Record<string, unknown>
}): ProviderCase {
  const [input, cached, written, output] = c.usage
  const price = perMillion(...c.price)
  const cost =
    (input - cached - written) * price.input +
    cached * (price.cached_input ?? price.input) +
    written * (price.cache_write ?? price.input) +
    output * price.output
  return {
    name: c.name,
    source: c.source,
    client: { adapter: 'openai', provider: c.provider },
    model: { name: c.model, api: 'chat', price },
    turns: [
      {
        input: 'Hi',
        replies: [{ frames: end(c.frames) }],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Hello.' }],
          usage: {
            input_tokens: input,
            cached_input_tokens: cached,
            cache_creation_tokens: written,
            output_tokens: output,
          },
          check: c.check,
          session: { total_cost_usd: expect.closeTo(cost, 12), ...c.session },
        },
      },
    ],
  }
}

export const promptCachingCases: ProviderCase[] = [
  {
    name: 'OpenAI Responses: one prompt_cache_key over the session; cached input at the cached rate',
    source: 'OpenAI Prompt caching guide; Responses API reference (usage.input_tokens_details)',
    client: { adapter: 'openai', provider: 'openai' },
    model: { name: gpt5, api: 'responses' },
    turns: [
      {
        input: 'Summarize the repo.',
        replies: [responsesTurn('msg_1', 'A CLI.', 2048, 0)],
        expect: {
          status: 'completed',
          requests: [{ store: false, prompt_cache_key: expect.stringMatching(KEY) }],
          check: ([request]) => {
            firstKey = request?.prompt_cache_key
          },
          // gpt-5.4: $2.50 input, $0.25 cached input, $15 output per 1M tokens.
          session: { total_cost_usd: expect.closeTo(2048 * 2.5e-6 + 10 * 15e-6, 12) },
        },
      },
      {
        input: 'And the tests?',
        replies: [responsesTurn('msg_2', 'Vitest.', 2100, 1920)],
        expect: {
          status: 'completed',
          usage: {
            input_tokens: 2100,
            cached_input_tokens: 1920,
            cache_creation_tokens: 0,
            output_tokens: 10,
          },
          check: ([request]) => expect(request?.prompt_cache_key).toBe(firstKey),
          session: {
            total_cost_usd: expect.closeTo(
              2048 * 2.5e-6 + 10 * 15e-6 + (180 * 2.5e-6 + 1920 * 0.25e-6 + 10 * 15e-6),
              12,
            ),
            usage: { input_tokens: 4148, cached_input_tokens: 1920 },
            price: { input: 2.5e-6, output: 15e-6, cached_input: 0.25e-6 },
          },
        },
      },
    ],
  },
  {
    name: 'xAI: the x-grok-conv-id header, the same on every request of a tool loop; no body key',
    source: 'docs.x.ai Prompt caching (x-grok-conv-id; usage.prompt_tokens_details.cached_tokens)',
    client: { adapter: 'openai', provider: 'xai' },
    model: { name: 'grok-4-fast', api: 'chat', price: perMillion(0.2, 0.5, 0.05) },
    tools: ['ls'],
    turns: [
      {
        input: 'List',
        replies: [
          {
            frames: end([
              xai({ delta: toolCall('call_ls1', 'ls', '{}') }),
              xai({ delta: {}, finish_reason: 'tool_calls', usage: xaiUsage(1500, 0, 12) }),
            ]),
          },
          {
            frames: end([
              xai({ delta: { content: 'Two files.' } }),
              xai({ delta: {}, finish_reason: 'stop', usage: xaiUsage(1560, 1472, 4) }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          usage: {
            input_tokens: 3060,
            cached_input_tokens: 1472,
            cache_creation_tokens: 0,
            output_tokens: 16,
          },
          check: (requests, headers) => {
            for (const request of requests) expect(request).not.toHaveProperty('prompt_cache_key')
            expect(headers[0]?.['x-grok-conv-id']).toMatch(KEY)
            expect(headers[1]?.['x-grok-conv-id']).toBe(headers[0]?.['x-grok-conv-id'])
          },
          session: {
            total_cost_usd: expect.closeTo(
              (3060 - 1472) * 0.2e-6 + 1472 * 0.05e-6 + 16 * 0.5e-6,
              12,
            ),
          },
        },
      },
    ],
  },
  helloCase({
    name: 'Mistral: prompt_cache_key in the body; cached tokens at 10 % of the input price',
    source: 'docs.mistral.ai Prompt caching (prompt_cache_key; prompt_tokens_details)',
    provider: 'mistral',
    model: 'mistral-medium-latest',
    price: [0.4, 2, 0.04],
    frames: [
      mistral({ delta: { role: 'assistant', content: 'Hello.' } }),
      mistral({
        delta: {},
        finish_reason: 'stop',
        usage: {
          prompt_tokens: 1280,
          completion_tokens: 2,
          total_tokens: 1282,
          prompt_tokens_details: { cached_tokens: 1216 },
        },
      }),
    ],
    usage: [1280, 1216, 0, 2],
    check: ([request]) => expect(request?.prompt_cache_key).toMatch(KEY),
  }),
  helloCase({
    name: 'DeepSeek: no key (prefix caching); prompt_cache_hit_tokens at the cache-hit price',
    source: 'DeepSeek Context Caching guide (prompt_cache_hit_tokens, prompt_cache_miss_tokens)',
    provider: 'deepseek',
    model: 'deepseek-chat',
    price: [0.28, 0.42, 0.028],
    frames: [
      deepseek({ delta: { role: 'assistant', content: 'Hello.' } }),
      deepseek({ delta: {}, finish_reason: 'stop' }),
      deepseek({
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 2,
          total_tokens: 1002,
          prompt_cache_hit_tokens: 896,
          prompt_cache_miss_tokens: 104,
        },
      }),
    ],
    usage: [1000, 896, 0, 2],
    check: noKey,
  }),
  helloCase({
    name: 'Moonshot: no key; cached_tokens of the usage in the choice at the cached price',
    source: 'Kimi Streaming guide (usage in the choice; cached_tokens)',
    provider: 'moonshot',
    model: MOONSHOT_MODEL,
    price: [0.6, 2.5, 0.15],
    frames: [
      chatChunk({ model: MOONSHOT_MODEL, delta: { role: 'assistant', content: 'Hello.' } }),
      moonshotLastChunk('stop', 3000, 2, 2816),
    ],
    usage: [3000, 2816, 0, 2],
    check: noKey,
  }),
  helloCase({
    name: 'OpenRouter: cache reads and cache writes, each at its own price',
    source: 'OpenRouter Usage Accounting (prompt_tokens_details.cached_tokens, cache_write_tokens)',
    provider: 'openrouter',
    model: 'anthropic/claude-sonnet-4.5',
    price: [3, 15, 0.3, 3.75],
    frames: [
      openrouter({ delta: { role: 'assistant', content: 'Hello.' } }),
      openrouter({
        delta: {},
        finish_reason: 'stop',
        usage: {
          prompt_tokens: 5000,
          completion_tokens: 2,
          total_tokens: 5002,
          cost: 0.0063,
          prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 1800 },
        },
      }),
    ],
    usage: [5000, 3000, 1800, 2],
    check: noKey,
    session: {
      price: { input: 3e-6, output: 15e-6, cached_input: 0.3e-6, cache_write: 3.75e-6 },
    },
  }),
  helloCase({
    name: 'Groq: no key (it refuses unknown fields); cached tokens from x_groq.usage',
    source: 'console.groq.com Prompt caching; Groq API reference (x_groq on streamed chunks)',
    provider: 'groq',
    model: 'openai/gpt-oss-120b',
    price: [0.15, 0.6, 0.075],
    frames: [
      groq({ delta: { role: 'assistant', content: 'Hello.' } }),
      groq({
        delta: {},
        finish_reason: 'stop',
        x_groq: {
          id: 'req_03k',
          usage: {
            prompt_tokens: 2200,
            completion_tokens: 2,
            total_tokens: 2202,
            prompt_tokens_details: { cached_tokens: 2048 },
          },
        },
      }),
    ],
    usage: [2200, 2048, 0, 2],
    check: noKey,
  }),
  {
    name: 'Anthropic: cache reads and writes beside input_tokens, each at its own price',
    source: 'Anthropic Prompt caching docs (usage fields; pricing multipliers)',
    client: { adapter: 'anthropic' },
    // Claude Sonnet 4.5: $3 input, $0.30 cache reads, $3.75 5-minute cache writes, $15 output.
    model: { name: 'claude-sonnet-4-5', api: 'anthropic', price: perMillion(3, 15, 0.3, 3.75) },
    turns: [
      {
        input: 'Hi',
        replies: [
          messageReply({
            model: 'claude-sonnet-4-5-20250929',
            usage: {
              input_tokens: 200,
              cache_read_input_tokens: 3000,
              cache_creation_input_tokens: 1800,
              output_tokens: 2,
            },
            blocks: [{ text: ['Hello.'] }],
            stop: 'end_turn',
          }),
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Hello.' }],
          usage: {
            input_tokens: 5000,
            cached_input_tokens: 3000,
            cache_creation_tokens: 1800,
            output_tokens: 2,
          },
          session: {
            total_cost_usd: expect.closeTo(
              200 * 3e-6 + 3000 * 0.3e-6 + 1800 * 3.75e-6 + 2 * 15e-6,
              12,
            ),
          },
        },
      },
    ],
  },
]
