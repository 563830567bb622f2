import { HTTP_STATUS } from '../src/contract/error-status.ts'
import { ERROR_CODES, type ErrorCode } from '../src/contract/errors.ts'
import { ErrorBodySchema } from '../src/contract/wire-responses.ts'

/** Codes whose failures are worth retrying unchanged (after `retryAfterSeconds`). */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'conflict',
  'session_busy',
  'storage_unavailable',
  'coordinator_unavailable',
  'runner_unavailable',
  // the tenant's request window and turn slots free up soon (not its daily quota)
  'rate_limited',
  'too_many_concurrent_turns',
])

export interface TurnlineApiErrorOptions {
  details?: Record<string, unknown> | undefined
  retryAfterSeconds?: number | undefined
  /** The Idempotency-Key the request carried: a retry with it cannot run the operation twice. */
  idempotencyKey?: string | undefined
  /** True when the error arrived inside a stream (`event: error`) after a 200. */
  inStream?: boolean
}

/**
 * The server refused or failed a request: its HTTP status and the error body's code, message and
 * details (docs/http-api.md#errors). `code` is one of {@link ERROR_CODES} for this version of the
 * server; a newer server may send others, so it is typed as a string too.
 */
export class TurnlineApiError extends Error {
  override readonly name = 'TurnlineApiError'
  readonly details: Record<string, unknown> | undefined
  readonly retryAfterSeconds: number | undefined
  readonly idempotencyKey: string | undefined
  readonly inStream: boolean

  constructor(
    readonly status: number,
    readonly code: ErrorCode | (string & {}),
    message: string,
    options: TurnlineApiErrorOptions = {},
  ) {
    super(message)
    this.details = options.details
    this.retryAfterSeconds = options.retryAfterSeconds
    this.idempotencyKey = options.idempotencyKey
    this.inStream = options.inStream ?? false
  }

  /**
   * Whether the same request may succeed later: busy, a store, coordinator or runner outage, or
   * a gateway's 502/503/504 page in front of the server.
   */
  get retryable(): boolean {
    if (RETRYABLE_CODES.has(this.code)) return true
    return this.code === 'http_error' && [502, 503, 504].includes(this.status)
  }
}

/**
 * The server could not be reached, or the connection broke before the answer was complete. A
 * request with an Idempotency-Key may be sent again with `idempotencyKey`.
 */
export class TurnlineConnectionError extends Error {
  override readonly name = 'TurnlineConnectionError'
  constructor(
    message: string,
    readonly idempotencyKey?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** The server answered something that is not the API's contract (a proxy's page, a bug). */
export class TurnlineProtocolError extends Error {
  override readonly name: string = 'TurnlineProtocolError'
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message)
  }
}

/** What a TurnlineAnswerTooLargeError names besides its bound. */
export interface AnswerTooLargeDetails {
  /** The answer's size in bytes, when it said it (Content-Length) before it was read. */
  size?: number | undefined
  /** What was read: `the answer` by default, `output artifact out_…`, `an events page`. */
  what?: string | undefined
  /** The option that sets the bound (default: the client's `maxAnswerBytes`). */
  option?: string | undefined
  /** How to read it anyway (a streamed read that holds nothing whole). */
  hint?: string | undefined
}

/**
 * A whole answer (a JSON body, an events page, an output artifact read into memory) past its
 * bound, by default the client's `maxAnswerBytes`: the rest was not read, so a broken or hostile
 * server cannot grow the client's memory without end. `size` is the answer's size when it said
 * it before it was read.
 */
export class TurnlineAnswerTooLargeError extends TurnlineProtocolError {
  override readonly name: string = 'TurnlineAnswerTooLargeError'
  readonly size: number | undefined
  constructor(
    readonly maxBytes: number,
    status: number,
    details: AnswerTooLargeDetails = {},
  ) {
    const what = details.what ?? 'the answer'
    const option = details.option ?? "the client's maxAnswerBytes"
    const told = details.size === undefined ? 'passed' : `holds ${details.size} bytes, past`
    const hint = details.hint === undefined ? '' : `; ${details.hint}`
    super(`${what} ${told} ${option} (${maxBytes} bytes); the rest was not read${hint}`, status)
    this.size = details.size
  }
}

/** The error of a non-2xx answer (or of an `event: error` frame) from its text. */
export function apiErrorOf(
  status: number | undefined,
  text: string,
  options: TurnlineApiErrorOptions = {},
): TurnlineApiError {
  let parsed: ReturnType<typeof ErrorBodySchema.safeParse> | undefined
  try {
    parsed = ErrorBodySchema.safeParse(JSON.parse(text))
  } catch {
    parsed = undefined
  }
  if (!parsed?.success) {
    const shown = text.trim().slice(0, 300) || '(empty body)'
    return new TurnlineApiError(
      status ?? 500,
      'http_error',
      `HTTP ${status ?? '?'}: ${shown}`,
      options,
    )
  }
  const { code, message, details } = parsed.data.error
  const known = (ERROR_CODES as readonly string[]).includes(code)
  const resolved = status ?? (known ? HTTP_STATUS[code as ErrorCode] : 500)
  return new TurnlineApiError(resolved, code, message, { ...options, details })
}

/**
 * Seconds of a Retry-After header, if any: its delay in seconds (the server's form), or an
 * HTTP-date (a gateway's or CDN's 503 may send one), as the seconds from now until it.
 */
export function retryAfterOf(response: Response, nowMs = Date.now()): number | undefined {
  const header = response.headers.get('retry-after')?.trim()
  if (header === undefined || header === '') return undefined
  if (/^\d+(\.\d+)?$/.test(header)) return Number(header)
  const at = Date.parse(header)
  return Number.isFinite(at) && /[a-z]/i.test(header)
    ? Math.max(0, Math.ceil((at - nowMs) / 1000))
    : undefined
}

/** A readable reason of a fetch failure (undici puts the socket error in `cause`). */
export function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = (error as Error & { cause?: unknown }).cause
  return cause instanceof Error ? `${error.message} (${cause.message})` : error.message
}
