import type { ErrorLog, MappedError } from './http-errors.ts'
import { errorResponse, mapError } from './http-errors.ts'
import { jsonResponse } from './json-response.ts'

/**
 * The Open Responses error envelope, for the `/v1/responses` routes: `{"error":{"type","code",
 * "param","message"}}` (the specification's "Errors"), Turnline's `details` kept beside them.
 * `type` is the specification's category of the status; `code` is Turnline's error code; `param`
 * names the offending request field as the client wrote it (`input[1].role`, `tools[0]`), and is
 * `""` when no field is at fault: the specification allows null, but `@ai-sdk/open-responses`
 * reads an error only when `param` is a string, and shows a bare status text otherwise.
 */
export type OpenResponsesErrorType =
  | 'invalid_request'
  | 'not_found'
  | 'too_many_requests'
  | 'model_error'
  | 'server_error'

export interface OpenResponsesErrorBody {
  error: {
    type: OpenResponsesErrorType
    code: string
    param: string
    message: string
    details?: Record<string, unknown>
  }
}

/** Whether a request path is one of the Open Responses routes. */
export function isOpenResponsesPath(path: string): boolean {
  return path === '/v1/responses' || path.startsWith('/v1/responses/')
}

/** How an error on `path` is answered: the Open Responses envelope there, Turnline's elsewhere. */
export function errorAnswerFor(path: string): (error: unknown, log: ErrorLog) => Response {
  return isOpenResponsesPath(path) ? openResponsesErrorResponse : errorResponse
}

export function errorTypeOf(status: number, code: string): OpenResponsesErrorType {
  if (status === 404) return 'not_found'
  if (status === 429) return 'too_many_requests'
  if (code === 'model_error') return 'model_error'
  return status >= 500 ? 'server_error' : 'invalid_request'
}

/** `body.input[1].role` → `input[1].role`; the body itself → `""`; `header.…`, `query.…` stay. */
function paramOf(details: Record<string, unknown> | undefined): string {
  const issues = details?.issues
  const first = Array.isArray(issues) ? (issues[0] as { field?: unknown } | undefined) : undefined
  const field = typeof details?.field === 'string' ? details.field : first?.field
  if (typeof field !== 'string' || field === 'body') return ''
  return field.startsWith('body.') ? field.slice('body.'.length) : field
}

export function openResponsesErrorBody(mapped: MappedError): OpenResponsesErrorBody {
  const { code, message, details } = mapped.body.error
  return {
    error: {
      type: errorTypeOf(mapped.status, code),
      code,
      param: paramOf(details),
      message,
      ...(details ? { details } : {}),
    },
  }
}

/** The error answer of a `/v1/responses` route, in the specification's envelope. */
export function openResponsesErrorResponse(error: unknown, log: ErrorLog): Response {
  return asOpenResponsesError(mapError(error, log))
}

/** A mapped error in the envelope; details that cannot be serialized are dropped, never fatal. */
export function asOpenResponsesError(mapped: MappedError): Response {
  const body = openResponsesErrorBody(mapped)
  let text: string
  try {
    text = JSON.stringify(body)
  } catch {
    const { details: _dropped, ...bare } = body.error
    text = JSON.stringify({ error: bare })
  }
  return jsonResponse(text, mapped.status, mapped.headers)
}
