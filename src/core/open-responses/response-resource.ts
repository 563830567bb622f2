import type { Usage } from '../../contract/usage.ts'
import type { OpenUsage, ResponseObject, ResponseSettings } from './types.ts'

/**
 * Sampling values reported when the request set none: the provider then used its own default,
 * which for OpenAI-compatible providers is temperature 1 and top_p 1. The specification
 * requires a number in the response resource.
 */
export const DEFAULT_TEMPERATURE = 1
export const DEFAULT_TOP_P = 1

export const DEFAULT_SETTINGS: ResponseSettings = {
  model: '',
  instructions: null,
  temperature: DEFAULT_TEMPERATURE,
  top_p: DEFAULT_TOP_P,
  max_output_tokens: null,
  max_tool_calls: null,
  metadata: {},
  tools: [],
  previous_response_id: null,
  text_format: { type: 'text' },
  tool_choice: 'auto',
  parallel_tool_calls: true,
  store: true,
}

/**
 * VT Code usage → Open Responses usage (every field the specification requires). VT Code's usage
 * does not count reasoning apart; the engine does (its state's `reasoning_tokens`), given here.
 */
export function toOpenUsage(usage: Usage, reasoningTokens?: number | null): OpenUsage {
  return withReasoning(
    {
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      total_tokens: usage.input_tokens + usage.output_tokens,
      input_tokens_details: { cached_tokens: usage.cached_input_tokens },
      output_tokens_details: { reasoning_tokens: 0 },
    },
    reasoningTokens,
  )
}

/** The usage with its reasoning tokens (0 when not counted: a response recorded before). */
export function withReasoning(usage: OpenUsage, reasoningTokens?: number | null): OpenUsage {
  return { ...usage, output_tokens_details: { reasoning_tokens: reasoningTokens ?? 0 } }
}

/**
 * A new response resource, `in_progress`, with every field the specification requires. What
 * Turnline does not vary is reported as it is: context compaction (`truncation: auto`);
 * `background` as the request asked.
 */
export function newResponseResource(
  id: string,
  createdAt: number,
  settings: ResponseSettings,
): ResponseObject {
  return {
    id,
    object: 'response',
    created_at: createdAt,
    completed_at: null,
    status: 'in_progress',
    incomplete_details: null,
    model: settings.model,
    previous_response_id: settings.previous_response_id,
    instructions: settings.instructions,
    output: [],
    error: null,
    tools: settings.tools.map((tool) => ({ ...tool })),
    tool_choice: structuredClone(settings.tool_choice),
    truncation: 'auto',
    parallel_tool_calls: settings.parallel_tool_calls,
    text: { format: structuredClone(settings.text_format) },
    top_p: settings.top_p,
    presence_penalty: 0,
    frequency_penalty: 0,
    top_logprobs: 0,
    temperature: settings.temperature,
    reasoning: null,
    usage: null,
    max_output_tokens: settings.max_output_tokens,
    max_tool_calls: settings.max_tool_calls,
    store: settings.store,
    background: settings.background ?? false,
    service_tier: 'default',
    metadata: { ...settings.metadata },
    safety_identifier: null,
    prompt_cache_key: null,
  }
}
