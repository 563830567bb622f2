import * as z from 'zod'
import type { SessionConfig } from '../../contract/session-config.ts'
import { DEFAULT_TEMPERATURE, DEFAULT_TOP_P } from './response-resource.ts'
import type { ResponseSettings } from './types.ts'

/**
 * A response of `POST /v1/responses` is a session; what its response resource echoes and the
 * session config does not hold (creation second, the model as the client named it, the
 * requested tool-call cap) is kept in the session's metadata under this key, so
 * `GET /v1/responses/:id` and the derived view rebuild exactly the response the client saw.
 * Client metadata may not use the `turnline:` prefix.
 */
export const RESPONSE_RECORD_KEY = 'turnline:open_responses'
export const RESERVED_METADATA_PREFIX = 'turnline:'

const RecordSchema = z.object({
  v: z.literal(1),
  created_at: z.number().int().nonnegative(),
  model: z.string(),
  max_tool_calls: z.number().int().positive().nullable(),
})
export type ResponseRecord = z.infer<typeof RecordSchema>

export function encodeResponseRecord(record: ResponseRecord): string {
  return JSON.stringify(record)
}

/** The record of a session created by `POST /v1/responses`, or undefined for other sessions. */
export function responseRecordOf(config: SessionConfig): ResponseRecord | undefined {
  const raw = config.metadata[RESPONSE_RECORD_KEY]
  if (raw === undefined) return undefined
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(raw))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

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
    },
    ...(record ? { createdAt: record.created_at } : {}),
  }
}
