/**
 * A mock model provider with a prompt cache, for bench/prompt-cache.ts. It answers Chat
 * Completions and Responses streams and reports the input it read from its cache in the usage
 * shape of the provider it plays (the shapes of the conformance cases,
 * test/support/provider-cases/). Its cache works like OpenAI's: requests are routed by their
 * cache key (`prompt_cache_key`, xAI's `x-grok-conv-id` header; without one, by prefix alone), and
 * a request reads from the cache the longest prefix it shares with an earlier request of its
 * route, counted in whole 128-token blocks once the prefix reaches 1024 tokens. A token is 4
 * characters of the request's JSON (tools, instructions, then the messages in order).
 */
import { Hono } from 'hono'
import { type RunningServer, serveApp } from '../../test/support/http-server.ts'
import { chatChunk, DONE } from '../../test/support/provider-case.ts'
import { responsesStream } from '../../test/support/provider-cases/responses-frames.ts'
import { type ReplayFrame, sseFrame } from '../../test/support/provider-replay.ts'

/** How a provider reports cached input (the conformance cases' families). */
export type UsageShape =
  | 'openai'
  | 'responses'
  | 'deepseek'
  | 'moonshot'
  | 'mistral'
  | 'xai'
  | 'groq'
  | 'openrouter'

const CHARS_PER_TOKEN = 4
const MIN_CACHED_TOKENS = 1024
const BLOCK_TOKENS = 128
const ANSWER = 'Done: the change is made and the tests pass. '.repeat(4).trim()

export interface CachingProvider extends RunningServer {
  baseURL: string
  /** Plays another provider: the usage shape of the answers that follow, an empty cache. */
  play(shape: UsageShape): void
}

function promptText(body: Record<string, unknown>): string {
  return JSON.stringify([body.tools ?? [], body.instructions ?? '', body.messages ?? body.input])
}

function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length)
  let i = 0
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/** The prompt cache: earlier prompts by route. */
class PromptCache {
  private readonly routes = new Map<string, string[]>()

  /** Tokens of `prompt` read from the cache of `route`; then `prompt` is cached too. */
  read(route: string, prompt: string): number {
    const earlier = this.routes.get(route) ?? []
    let chars = 0
    for (const text of earlier) chars = Math.max(chars, commonPrefix(text, prompt))
    earlier.push(prompt)
    if (earlier.length > 16) earlier.shift()
    this.routes.set(route, earlier)
    const tokens = Math.floor(chars / CHARS_PER_TOKEN)
    return tokens < MIN_CACHED_TOKENS ? 0 : tokens - (tokens % BLOCK_TOKENS)
  }
}

function chatFrames(shape: UsageShape, model: string, prompt: number, cached: number) {
  const completion = Math.ceil(ANSWER.length / CHARS_PER_TOKEN)
  const base = { prompt_tokens: prompt, completion_tokens: completion }
  const total = { ...base, total_tokens: prompt + completion }
  const details = { ...total, prompt_tokens_details: { cached_tokens: cached } }
  const text = chatChunk({ model, delta: { role: 'assistant', content: ANSWER } })
  const stop = (extra: Record<string, unknown> = {}) =>
    chatChunk({ model, delta: {}, finish_reason: 'stop', ...extra })
  switch (shape) {
    case 'deepseek': {
      const usage = {
        ...total,
        prompt_cache_hit_tokens: cached,
        prompt_cache_miss_tokens: prompt - cached,
      }
      return [text, stop(), chatChunk({ model, usage })]
    }
    case 'moonshot': {
      const last = stop()
      const choice = (last.data.choices as Record<string, unknown>[])[0] as Record<string, unknown>
      choice.usage = { ...total, cached_tokens: cached }
      return [text, last]
    }
    case 'mistral':
    case 'openrouter':
      return [text, stop({ usage: details })]
    case 'groq':
      return [text, stop({ x_groq: { id: 'req_bench', usage: details } })]
    default:
      return [text, stop(), chatChunk({ model, usage: details })]
  }
}

export async function startCachingProvider(): Promise<CachingProvider> {
  let cache = new PromptCache()
  let shape: UsageShape = 'openai'
  const app = new Hono()
  app.post('*', async (c) => {
    const body = (await c.req.json()) as Record<string, unknown>
    const route = String(body.prompt_cache_key ?? c.req.header('x-grok-conv-id') ?? '(prefix)')
    const text = promptText(body)
    const prompt = Math.ceil(text.length / CHARS_PER_TOKEN)
    const cached = cache.read(route, text)
    const model = String(body.model)
    const frames: ReplayFrame[] = c.req.path.endsWith('/responses')
      ? responsesStream(model, [{ type: 'message', id: 'msg_bench', text: ANSWER }], {
          input_tokens: prompt,
          cached_tokens: cached,
          output_tokens: Math.ceil(ANSWER.length / CHARS_PER_TOKEN),
        })
      : [...chatFrames(shape, model, prompt, cached), DONE]
    return new Response(frames.map(sseFrame).join(''), {
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
    })
  })
  const server = await serveApp(app)
  return {
    ...server,
    baseURL: `${server.url}/v1`,
    play: (next) => {
      shape = next
      cache = new PromptCache()
    },
  }
}
