import type {
  MessageCreateParamsStreaming,
  ThinkingConfigParam,
  Tool,
  ToolChoice,
} from '@anthropic-ai/sdk/resources/messages'
import type { ModelRequest } from '../../src/ports/model-client.ts'
import { ProviderStreamError } from '../shared/model-failure.ts'
import { placeCacheBreakpoints } from './cache-breakpoints.ts'
import { toAnthropicTranscript } from './messages-transcript.ts'
import { thinkingSettings } from './thinking-settings.ts'

/**
 * The streamed Messages API request of a model request: the transcript (messages-transcript.ts),
 * the tools as `input_schema` tools, the prompt-caching breakpoints (cache-breakpoints.ts),
 * `max_tokens` and thinking (thinking-settings.ts), and the session's output schema as
 * `output_config.format` (structured output, json_schema). No sampling parameters: the API
 * version the SDK speaks (2026-10-21) refuses temperature, top_p and top_k.
 */
export function messagesRequestBody(request: ModelRequest): MessageCreateParamsStreaming {
  if (request.temperature !== undefined || request.topP !== undefined) {
    // API version 2026-10-21 (what the SDK sends) answers 400 to any sampling parameter; a
    // session on `api: "anthropic"` is refused them at creation, one on the deployment's
    // default API only here.
    throw new ProviderStreamError(
      'the Anthropic Messages API takes no temperature or top_p: remove them from the session model settings',
      'sampling_not_supported',
      'bad_request',
    )
  }
  const { system, messages } = toAnthropicTranscript(request.messages)
  const tools: Tool[] = request.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.parameters },
  }))
  placeCacheBreakpoints(tools, system, messages)
  const { max_tokens, thinking, output_config } = thinkingSettings(request)
  const format = request.outputSchema
    ? { format: { type: 'json_schema' as const, schema: request.outputSchema } }
    : {}
  const config = output_config || request.outputSchema ? { ...output_config, ...format } : undefined
  return {
    model: request.model,
    max_tokens,
    messages,
    stream: true,
    ...(system.length > 0 ? { system } : {}),
    ...(tools.length > 0 ? toolChoiceOf(request, thinking) : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(thinking ? { thinking } : {}),
    ...(config ? { output_config: config } : {}),
  }
}

/**
 * `tool_choice` as the Messages API takes it: `none`, `any` (required), `tool` (a named one),
 * with `disable_parallel_tool_use` for `parallel_tool_calls: false`. The API refuses a forced
 * choice while the model thinks, so that is said here instead of as the provider's 400.
 */
function toolChoiceOf(
  request: ModelRequest,
  thinking: ThinkingConfigParam | undefined,
): { tool_choice?: ToolChoice } {
  const choice = request.toolChoice
  const single = request.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {}
  if (choice === undefined) {
    return request.parallelToolCalls === false ? { tool_choice: { type: 'auto', ...single } } : {}
  }
  if (choice === 'none') return { tool_choice: { type: 'none' } }
  if (thinking !== undefined && thinking.type !== 'disabled') {
    throw new ProviderStreamError(
      'the Anthropic Messages API cannot force a tool call while the model thinks: use tool_choice "auto" or "none", or turn reasoning_effort off',
      'tool_choice_not_supported',
      'bad_request',
    )
  }
  return {
    tool_choice:
      choice === 'required'
        ? { type: 'any', ...single }
        : { type: 'tool', name: choice.name, ...single },
  }
}
