import { TurnlineError } from '../src/contract/errors.ts'
import type { ModelClient, ModelStreamEvent } from '../src/ports/model-client.ts'

/**
 * The deployment's one ModelClient over its two adapters: requests of sessions on
 * `api: "anthropic"` go to the Anthropic adapter, the others (`chat`, `responses`) to the
 * OpenAI adapter; compaction at the provider is the OpenAI adapter's (Responses API only).
 */
export function routedModelClient(clients: { openai: ModelClient; anthropic: ModelClient }) {
  const { openai, anthropic } = clients
  const routed: ModelClient = {
    stream: (request) =>
      request.api === 'anthropic' ? anthropic.stream(request) : openai.stream(request),
  }
  const compact = openai.compact?.bind(openai)
  if (compact) routed.compact = compact
  return routed
}

/** The error of a session on `api: "anthropic"` in a deployment with no Anthropic endpoint. */
export function anthropicNotConfiguredError(): TurnlineError {
  return new TurnlineError(
    'model_not_configured',
    'This session asks for the Anthropic Messages API (model api "anthropic") and none is configured: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (and optionally ANTHROPIC_BASE_URL).',
  )
}

/** Stand-in for the Anthropic side of a deployment without it: every stream fails at first pull. */
export const unconfiguredAnthropicClient: ModelClient = {
  // biome-ignore lint/correctness/useYield: fails before producing anything, by design
  async *stream(): AsyncGenerator<ModelStreamEvent> {
    throw anthropicNotConfiguredError()
  },
}
