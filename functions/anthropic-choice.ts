import { createAnthropicModelClient } from '../adapters/anthropic/anthropic-model-client.ts'
import type { ModelClient } from '../src/ports/model-client.ts'
import type { EnvConfig } from './env-config.ts'

const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com'
/** Sent as the key to a gateway given by ANTHROPIC_BASE_URL alone (one that needs none). */
const KEYLESS_PLACEHOLDER = 'unused'

/**
 * The Anthropic side of the deployment's model (sessions on `api: "anthropic"`): configured by
 * ANTHROPIC_API_KEY, and ANTHROPIC_BASE_URL for another endpoint with the same API (a gateway,
 * a proxy); undefined when neither is set.
 */
export function chooseAnthropic(
  config: Pick<EnvConfig, 'ANTHROPIC_API_KEY' | 'ANTHROPIC_BASE_URL'>,
  fetchImpl: typeof fetch,
): { client: ModelClient; baseURL: string; notice: string } | undefined {
  const { ANTHROPIC_API_KEY: apiKey, ANTHROPIC_BASE_URL: baseURL } = config
  if (apiKey === undefined && baseURL === undefined) return undefined
  const endpoint = baseURL ?? ANTHROPIC_DEFAULT_BASE_URL
  return {
    client: createAnthropicModelClient({
      apiKey: apiKey ?? KEYLESS_PLACEHOLDER,
      baseURL: endpoint,
      fetch: fetchImpl,
    }),
    baseURL: endpoint,
    notice: `via ${endpoint} (Anthropic Messages API, ${apiKey === undefined ? 'no API key' : 'API key set'})`,
  }
}
