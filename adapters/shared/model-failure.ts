import { TurnlineError } from '../../src/contract/errors.ts'
import { transportFailureText } from '../../src/contract/transport-failure.ts'
import { redactCredentials } from '../../src/shared/redact-credentials.ts'

/**
 * A failed model call as every model adapter reports it (adapters/openai, adapters/anthropic):
 * each adapter classifies its own SDK's errors into a {@link ModelFailure}; what the caller sees
 * once the adapter gives up is one `model_error` TurnlineError, the same for every provider.
 */
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

/**
 * A failure that is not one of the SDK's errors: a {@link ProviderStreamError} the adapter raised
 * from a stream (classed by its kind, else by `kindOfCode`), or anything thrown while reading a
 * body — a malformed body (SyntaxError) is a provider fault, any other throw is transport.
 */
export function otherFailure(
  error: unknown,
  kindOfCode: (code: string | undefined, message: string, type?: string) => ModelErrorKind,
  retryable: (kind: ModelErrorKind, code: string | undefined) => boolean,
): ModelFailure {
  const base = { status: undefined, code: undefined, retryAfterMs: undefined, requestId: undefined }
  if (error instanceof ProviderStreamError) {
    const kind = error.kind ?? kindOfCode(error.code, error.message, error.type)
    return {
      ...base,
      kind,
      code: error.code,
      message: error.message,
      retryable: retryable(kind, error.code),
      cause: error,
    }
  }
  // Either way the text is Turnline's: the runtime's own differs by engine (it stays the cause).
  const kind: ModelErrorKind = error instanceof SyntaxError ? 'server' : 'network'
  const message = kind === 'server' ? 'the answer is not valid JSON' : transportFailureText(error)
  return { ...base, kind, message, retryable: kind === 'network', cause: error }
}

/** A transport failure (the SDK's connection error): always worth another attempt. */
export function connectionFailure(error: Error): ModelFailure {
  return {
    kind: 'network',
    status: undefined,
    code: undefined,
    message: error.message,
    retryable: true,
    retryAfterMs: undefined,
    requestId: undefined,
    cause: error,
  }
}

/** Retry-After in ms from `retry-after-ms`, or `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(
  headers: Headers | null | undefined,
  now = Date.now(),
): number | undefined {
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

/**
 * What an `auth` failure says instead of the provider's answer: the credentials are the
 * deployment's, and providers name part of the key they refused.
 */
export const AUTH_FAILURE_TEXT =
  "the provider refused the deployment's model credentials (its answer is not shown: it may name the key)"

/**
 * The TurnlineError a caller sees once the adapter gives up. Its message reaches tenants (the
 * turn's `turn.failed`, callbacks, answers): the provider's own text only with credential-shaped
 * parts redacted, and none of it for an `auth` failure; the redacted text is kept for the
 * operator in `logDetails.provider_message`.
 */
export function modelError(failure: ModelFailure, attempts: number): TurnlineError {
  const status = failure.status === undefined ? '' : ` (HTTP ${failure.status})`
  const tries = attempts > 1 ? ` after ${attempts} attempts` : ''
  const said = redactCredentials(failure.message)
  const shown = failure.kind === 'auth' ? AUTH_FAILURE_TEXT : said
  return new TurnlineError(
    'model_error',
    `Model request failed: ${failure.kind}${status}${tries}: ${shown}`,
    {
      logDetails: { provider_message: said },
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
