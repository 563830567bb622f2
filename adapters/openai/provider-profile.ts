/**
 * What an OpenAI-compatible provider needs beyond the OpenAI wire format: the adapter speaks one
 * protocol to all of them, and these few differences are the ones a request or a stream depends
 * on. The provider is named by configuration (`TURNLINE_MODEL_PROVIDER`), else recognized from the
 * endpoint's host; an endpoint nobody recognizes (a self-hosted server, a proxy) is `generic`.
 */
export const OPENAI_COMPATIBLE_PROVIDERS = [
  'openai',
  'azure',
  'deepseek',
  'moonshot',
  'mistral',
  'xai',
  'qwen',
  'groq',
  'openrouter',
  'ollama',
  'vllm',
  'lmstudio',
  'generic',
] as const
export type OpenAICompatibleProvider = (typeof OPENAI_COMPATIBLE_PROVIDERS)[number]

export interface ProviderProfile {
  name: OpenAICompatibleProvider
  /**
   * How Chat assistant messages carry their reasoning back. `required`: always in
   * `reasoning_content`, an empty string on a tool-call message that has none (DeepSeek's and
   * Moonshot's thinking models answer 400 without it). `same_field`: in the field it streamed in,
   * when there is any (servers that template it back, such as vLLM). `never`: the provider rejects
   * or ignores it (Groq rejects an unknown message property).
   */
  reasoningEcho: 'required' | 'same_field' | 'never'
  /**
   * Where the prompt-cache routing key goes: the `prompt_cache_key` body field (OpenAI, Azure,
   * Mistral), xAI's `x-grok-conv-id` header, or nowhere (providers that cache by prefix alone, or that reject
   * unknown fields).
   */
  cacheKey: 'prompt_cache_key' | 'x-grok-conv-id' | 'none'
}

const PROFILES: Record<OpenAICompatibleProvider, Omit<ProviderProfile, 'name'>> = {
  openai: { reasoningEcho: 'never', cacheKey: 'prompt_cache_key' },
  azure: { reasoningEcho: 'never', cacheKey: 'prompt_cache_key' },
  deepseek: { reasoningEcho: 'required', cacheKey: 'none' },
  moonshot: { reasoningEcho: 'required', cacheKey: 'none' },
  mistral: { reasoningEcho: 'never', cacheKey: 'prompt_cache_key' },
  xai: { reasoningEcho: 'never', cacheKey: 'x-grok-conv-id' },
  qwen: { reasoningEcho: 'never', cacheKey: 'none' },
  groq: { reasoningEcho: 'never', cacheKey: 'none' },
  openrouter: { reasoningEcho: 'same_field', cacheKey: 'none' },
  ollama: { reasoningEcho: 'same_field', cacheKey: 'none' },
  vllm: { reasoningEcho: 'same_field', cacheKey: 'none' },
  lmstudio: { reasoningEcho: 'same_field', cacheKey: 'none' },
  generic: { reasoningEcho: 'same_field', cacheKey: 'none' },
}

/** Hosts of the hosted providers (the host itself or any subdomain). */
const HOSTS: readonly [string, OpenAICompatibleProvider][] = [
  ['api.openai.com', 'openai'],
  ['openai.azure.com', 'azure'],
  ['services.ai.azure.com', 'azure'],
  ['api.deepseek.com', 'deepseek'],
  ['api.moonshot.ai', 'moonshot'],
  ['api.moonshot.cn', 'moonshot'],
  ['api.mistral.ai', 'mistral'],
  ['api.x.ai', 'xai'],
  ['dashscope.aliyuncs.com', 'qwen'],
  ['dashscope-intl.aliyuncs.com', 'qwen'],
  ['api.groq.com', 'groq'],
  ['openrouter.ai', 'openrouter'],
]

/** The provider behind `baseURL`: by host, else by the default port of a local server. */
export function recognizeProvider(baseURL: string | undefined): OpenAICompatibleProvider {
  if (baseURL === undefined) return 'openai'
  let url: URL
  try {
    url = new URL(baseURL)
  } catch {
    return 'generic'
  }
  const host = url.hostname.toLowerCase()
  for (const [known, provider] of HOSTS) {
    if (host === known || host.endsWith(`.${known}`)) return provider
  }
  if (url.port === '11434') return 'ollama'
  if (url.port === '1234') return 'lmstudio'
  return 'generic'
}

/** The `prompt_cache_key` body field, where the provider routes its cache by that key. */
export function cacheKeyField(
  request: { promptCacheKey?: string | undefined },
  profile: ProviderProfile,
): { prompt_cache_key?: string } {
  return request.promptCacheKey && profile.cacheKey === 'prompt_cache_key'
    ? { prompt_cache_key: request.promptCacheKey }
    : {}
}

/** xAI routes requests of one conversation to the same cache by the `x-grok-conv-id` header. */
export function cacheKeyHeaders(
  request: { promptCacheKey?: string | undefined },
  profile: ProviderProfile,
): Record<string, string> {
  return request.promptCacheKey && profile.cacheKey === 'x-grok-conv-id'
    ? { 'x-grok-conv-id': request.promptCacheKey }
    : {}
}

export function providerProfile(name: OpenAICompatibleProvider): ProviderProfile {
  return { name, ...PROFILES[name] }
}
