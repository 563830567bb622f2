import { APIConnectionError, APIError, APIUserAbortError } from 'openai'
import { TurnlineError } from '../../src/contract/errors.ts'
import { transportFailureText } from '../../src/ports/transport-failure.ts'

export type ModelErrorKind =
  | 'context_overflow'
  | 'rate_limit'
  | 'server'
  | 'auth'
  | 'bad_request'
  | 'network'

/** An error event inside a stream (`error`, `response.failed`, a truncated stream). */
export class ProviderStreamError extends Error {
  override readonly name = 'ProviderStreamError'
  readonly code: string | undefined
  readonly kind: ModelErrorKind | undefined
  /** The error's `type` as the provider named it (`server_error`, `invalid_request_error`, …). */
  readonly type: string | undefined

  constructor(message: string, code?: string | null, kind?: ModelErrorKind, type?: string | null) {
    super(message)
    this.code = code ?? undefined
    this.kind = kind
    this.type = type ?? undefined
  }
}

/** One failed attempt, classified. */
export interface ModelFailure {
  kind: ModelErrorKind
  status: number | undefined
  code: string | undefined
  message: string
  /** Worth another attempt by the adapter's retry loop. */
  retryable: boolean
  /** Server-requested wait (Retry-After / retry-after-ms), in ms. */
  retryAfterMs: number | undefined
  requestId: string | undefined
  cause: unknown
}

const CONTEXT_MESSAGE =
  /context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|input is too long|reduce the length of the (messages|input)/i

function isContextOverflow(code: string | undefined, message: string): boolean {
  return code === 'context_length_exceeded' || CONTEXT_MESSAGE.test(message)
}

/** Retry-After in ms from `retry-after-ms`, or `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms)
    if (Number.isFinite(value) && value >= 0) return value
  }
  const header = headers.get('retry-after')
  if (header === null || header.trim() === '') return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
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
  const base = { status: undefined, code: undefined, retryAfterMs: undefined, requestId: undefined }
  if (error instanceof APIConnectionError) {
    return { ...base, kind: 'network', message: error.message, retryable: true, cause: error }
  }
  if (error instanceof APIError) return fromApiError(error)
  if (error instanceof ProviderStreamError) {
    const kind = error.kind ?? kindForCode(error.code, error.message, error.type)
    return {
      ...base,
      kind,
      code: error.code,
      message: error.message,
      retryable: retryableKind(kind, error.code),
      cause: error,
    }
  }
  // A malformed body (unparseable JSON) is a provider fault; other throws mid-body are transport.
  // Either way the text is Turnline's: the runtime's own differs by engine (it stays the cause).
  const kind: ModelErrorKind = error instanceof SyntaxError ? 'server' : 'network'
  const message = kind === 'server' ? 'the answer is not valid JSON' : transportFailureText(error)
  return { ...base, kind, message, retryable: kind === 'network', cause: error }
}

export function isUserAbort(error: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || error instanceof APIUserAbortError
}

/** The TurnlineError a caller sees once the adapter gives up. */
export function modelError(failure: ModelFailure, attempts: number): TurnlineError {
  const status = failure.status === undefined ? '' : ` (HTTP ${failure.status})`
  const tries = attempts > 1 ? ` after ${attempts} attempts` : ''
  return new TurnlineError(
    'model_error',
    `Model request failed: ${failure.kind}${status}${tries}: ${failure.message}`,
    {
      details: {
        status: failure.status ?? null,
        kind: failure.kind,
        ...(failure.code === undefined ? {} : { code: failure.code }),
        ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
        attempts,
      },
      cause: failure.cause,
      retryable: failure.retryable,
      ...(failure.retryAfterMs === undefined
        ? {}
        : { retryAfter: Math.ceil(failure.retryAfterMs / 1000) }),
    },
  )
}
