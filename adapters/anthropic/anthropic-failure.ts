import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk/error'
import {
  connectionFailure,
  type ModelErrorKind,
  type ModelFailure,
  otherFailure,
  retryAfterMs,
} from '../shared/model-failure.ts'

/**
 * Classifies what a Messages API call threw, by Anthropic's error `type` first (the body's
 * `error.type`, also of an `error` event inside a stream, which has no HTTP status), then by
 * status (docs: "Errors" of the Claude API):
 *
 * | type | status | kind | retried |
 * |---|---|---|---|
 * | `overloaded_error` | 529 | server | yes |
 * | `api_error`, `timeout_error` | 500, 504 | server | yes |
 * | `rate_limit_error` | 429 | rate_limit | yes (Retry-After honoured) |
 * | `request_too_large` | 413 | context_overflow | no: recovery compaction |
 * | `invalid_request_error` "prompt is too long" | 400 | context_overflow | no: recovery compaction |
 * | `invalid_request_error` | 400 | bad_request | no |
 * | `authentication_error`, `permission_error` | 401, 403 | auth | no |
 * | `billing_error` | 402 | rate_limit | no |
 * | `not_found_error` | 404 | bad_request | no |
 */
const CONTEXT_MESSAGE =
  /prompt is too long|input is too long|exceeds? (the )?context (limit|window)|context window|too many (input )?tokens/i

const KIND_OF_TYPE: Readonly<Record<string, ModelErrorKind>> = {
  overloaded_error: 'server',
  api_error: 'server',
  timeout_error: 'server',
  rate_limit_error: 'rate_limit',
  request_too_large: 'context_overflow',
  authentication_error: 'auth',
  permission_error: 'auth',
  billing_error: 'rate_limit',
  not_found_error: 'bad_request',
}

function kindOf(type: string | undefined, status: number | undefined, message: string) {
  if (CONTEXT_MESSAGE.test(message)) return 'context_overflow'
  const byType = type === undefined ? undefined : KIND_OF_TYPE[type]
  if (byType) return byType
  if (status === undefined) return type === 'invalid_request_error' ? 'bad_request' : 'server'
  if (status === 401 || status === 403) return 'auth'
  if (status === 413) return 'context_overflow'
  if (status === 429) return 'rate_limit'
  if (status === 408) return 'network'
  if (status >= 500) return 'server'
  return 'bad_request'
}

function retryable(kind: ModelErrorKind, type: string | undefined): boolean {
  if (type === 'billing_error') return false
  return kind === 'rate_limit' || kind === 'server' || kind === 'network'
}

function fromApiError(error: APIError): ModelFailure {
  const type = typeof error.type === 'string' ? error.type : undefined
  const message = error.apiMessage ?? error.message
  const kind = kindOf(type, error.status, message)
  return {
    kind,
    status: error.status,
    code: type,
    message,
    retryable: retryable(kind, type),
    retryAfterMs: retryAfterMs(error.headers),
    requestId: error.requestID ?? undefined,
    cause: error,
  }
}

/**
 * Anything thrown while requesting or reading a Messages stream, classified. Errors that are not
 * the API's and surface while reading the body (a dropped connection) count as network.
 */
export function classifyAnthropicFailure(error: unknown): ModelFailure {
  if (error instanceof APIConnectionError) return connectionFailure(error)
  if (error instanceof APIError) return fromApiError(error)
  return otherFailure(
    error,
    (code, message, type) => kindOf(type ?? code, undefined, message),
    retryable,
  )
}

export function isAnthropicUserAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || error instanceof APIUserAbortError
}
