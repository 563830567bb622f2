import { TurnlineError } from '../../src/contract/errors.ts'
import type { ModelClient, ModelStreamEvent } from '../../src/ports/model-client.ts'

/** The error every model call reports when no model endpoint is configured. */
export function modelNotConfiguredError(): TurnlineError {
  return new TurnlineError(
    'model_not_configured',
    'No model is configured: set OPENAI_API_KEY (and optionally OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama or vLLM) and TURNLINE_MODEL, or pass model settings when creating the session.',
  )
}

/** Stand-in ModelClient for deployments without a model: every stream throws at first pull. */
export const unconfiguredModelClient: ModelClient = {
  // biome-ignore lint/correctness/useYield: fails before producing anything, by design
  async *stream(): AsyncGenerator<ModelStreamEvent> {
    throw modelNotConfiguredError()
  },
}
