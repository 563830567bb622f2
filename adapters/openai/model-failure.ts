import { APIConnectionError, APIError, APIUserAbortError } from 'openai/error'
import {
  connectionFailure,
  type ModelErrorKind,
  type ModelFailure,
  otherFailure,
  ProviderStreamError,
  retryAfterMs,
} from '../shared/model-failure.ts'

export type { ModelErrorKind, ModelFailure }
export { ProviderStreamError }

const CONTEXT_MESSAGE =
  /context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|input is too long|reduce the length of the (messages|input)/i

function isContextOverflow(code: string | undefined, message: string): boolean {
  return code === 'context_length_exceeded' || CONTEXT_MESSAGE.test(message)
}

function kindForStatus(status: number, code: string | undefined, message: string): ModelErrorKind {
  if (status === 401 || status === 403) return 'auth'
  if (status === 429) return 'rate_limit'
  if (status === 408) return 'network'
  if (status >= 500) return 'server'
  return isContextOverflow(code, message) ? 'context_overflow' : 'bad_request'
}

const SERVER_CODES = new Set(['server_error', 'internal_error', 'vector_store_timeout'])
/** Error `type`s that name a fault of the provider, whatever the code beside them says. */
const SERVER_TYPES = new Set([
  'server_error',
  'api_error',
  'internal_error',
  'overloaded_error',
  'service_unavailable',
  'service_unavailable_error',
])
const RATE_LIMIT_TYPES = new Set(['rate_limit_error', 'requests', 'tokens', 'rate_limit_exceeded'])

/**
 * For errors without an HTTP status (in-stream errors): the error's `type` decides first — a
 * `server_error` with a code we do not know is still the provider's fault — then the code; no
 * code at all is a server fault.
 */
function kindForCode(
  code: string | undefined,
  message: string,
  type?: string | undefined,
): ModelErrorKind {
  if (isContextOverflow(code, message)) return 'context_overflow'
  if (code === 'rate_limit_exceeded' || code === 'insufficient_quota') return 'rate_limit'
  if (type !== undefined && RATE_LIMIT_TYPES.has(type)) return 'rate_limit'
  if (code === 'invalid_api_key' || type === 'authentication_error') return 'auth'
  if (type !== undefined && SERVER_TYPES.has(type)) return 'server'
  if (code === undefined || SERVER_CODES.has(code)) return 'server'
  // invalid_prompt, invalid_image, image_content_policy_violation, …: retrying cannot help.
  return 'bad_request'
}

function retryableKind(kind: ModelErrorKind, code: string | undefined): boolean {
  if (code === 'insufficient_quota') return false
  return kind === 'rate_limit' || kind === 'server' || kind === 'network'
}

function fromApiError(error: APIError): ModelFailure {
  const code = typeof error.code === 'string' ? error.code : undefined
  // OpenRouter's in-stream errors carry the upstream HTTP status as a numeric code.
  const status = error.status ?? (typeof error.code === 'number' ? error.code : undefined)
  const type = typeof error.type === 'string' ? error.type : undefined
  const kind =
    status === undefined
      ? kindForCode(code, error.message, type)
      : kindForStatus(status, code, error.message)
  return {
    kind,
    status,
    code,
    message: error.message,
    retryable: retryableKind(kind, code),
    retryAfterMs: retryAfterMs(error.headers),
    requestId: error.requestID ?? undefined,
    cause: error,
  }
}

/**
 * Classifies anything thrown while requesting or reading a model stream. Errors that are not
 * provider errors and surface while reading the body (a dropped connection) count as network.
 */
export function classifyModelFailure(error: unknown): ModelFailure {
  if (error instanceof APIConnectionError) return connectionFailure(error)
  if (error instanceof APIError) return fromApiError(error)
  return otherFailure(error, kindForCode, retryableKind)
}

export function isUserAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || error instanceof APIUserAbortError
}
