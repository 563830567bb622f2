import type { JsonValue } from '../../contract/json-value.ts'
import { RESERVED_METADATA_PREFIX, responseRecordOf } from '../../contract/open-responses-record.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import { DEFAULT_TEMPERATURE, DEFAULT_TOP_P } from './response-resource.ts'
import type { ResponseSettings } from './types.ts'

/** Session id ↔ response id: a response is `resp_<session id>` (its thread id). */
export const responseIdOf = (sessionId: string): string => `resp_${sessionId}`
export function sessionIdOf(responseId: string): string | undefined {
  return responseId.startsWith('resp_') && responseId.length > 5 ? responseId.slice(5) : undefined
}

/**
 * What the response resource of a session echoes: from its record when it has one, else from
 * its config (`fallbackModel` names the model when the session names none).
 */
export function responseSettingsOf(
  config: SessionConfig,
  fallbackModel: string,
): { settings: ResponseSettings; createdAt?: number } {
  const record = responseRecordOf(config)
  const model = typeof config.model === 'string' ? { name: config.model } : config.model
  const metadata: { [key: string]: string } = {}
  for (const [key, value] of Object.entries(config.metadata)) {
    if (!key.startsWith(RESERVED_METADATA_PREFIX)) metadata[key] = value
  }
  return {
    settings: {
      model: record?.model ?? model?.name ?? fallbackModel,
      instructions: config.instructions ?? null,
      temperature: model?.temperature ?? DEFAULT_TEMPERATURE,
      top_p: model?.top_p ?? DEFAULT_TOP_P,
      max_output_tokens: model?.max_output_tokens ?? null,
      max_tool_calls: record?.max_tool_calls ?? null,
      metadata,
      tools: (config.client_tools ?? []).map((tool) => ({
        type: 'function' as const,
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters as { [key: string]: JsonValue },
        strict: tool.strict ?? null,
      })),
      previous_response_id: record?.previous_response_id ?? null,
      text_format: record?.text_format
        ? {
            type: 'json_schema',
            name: record.text_format.name,
            description: record.text_format.description ?? null,
            schema: record.text_format.schema as { [key: string]: JsonValue },
            // Always sent strict to the provider, and the answer is checked.
            strict: true,
          }
        : { type: 'text' },
      tool_choice: config.tool_choice ?? 'auto',
      parallel_tool_calls: config.parallel_tool_calls ?? true,
      store: record?.store ?? true,
      ...(record?.background ? { background: true } : {}),
    },
    ...(record ? { createdAt: record.created_at } : {}),
  }
}
