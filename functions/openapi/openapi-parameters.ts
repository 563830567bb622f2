import type * as z from 'zod'
import { type Json, jsonContent, ref, schemaOf } from './openapi-schemas.ts'

/** The path parameter and error responses every operation of the document shares. */

export const idParameter = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$' },
}

export const errorResponses = (...statuses: number[]): Json =>
  Object.fromEntries(
    statuses.map((status) => [
      String(status),
      { description: ERROR_TEXT[status] ?? 'error', content: jsonContent(ref('Error')) },
    ]),
  )

const ERROR_TEXT: Record<number, string> = {
  400: 'invalid_input: the message names the field',
  401: 'unauthorized: missing or wrong API key',
  404: 'not_found: no such session for this tenant',
  409: 'session_busy (with Retry-After), session_completed, or conflict',
  413: 'payload_too_large',
  422: 'model_not_configured, or idempotency_key_reused: the key was used with another request',
  429: 'rate_limited, too_many_concurrent_turns or quota_exceeded (with Retry-After)',
  500: 'internal fault',
  502: 'model_error or tool_error: an upstream failed',
  503: 'storage, coordinator or runner unavailable; retry later',
}

export function queryParameters(schema: z.ZodType): Json[] {
  const json = schemaOf(schema) as { properties?: Record<string, Json> }
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: false,
    schema: property,
  }))
}
