/**
 * Typed errors. Every fault that crosses a module boundary is a TurnlineError with a stable
 * `code`; `functions/http-errors.ts` maps codes to HTTP statuses in one place.
 */
export const ERROR_CODES = [
  'invalid_input',
  'not_found',
  'method_not_allowed',
  'conflict',
  'session_busy',
  'session_completed',
  'follow_up_queue_full',
  'idempotency_key_reused',
  'unauthorized',
  'forbidden',
  'corrupt_data',
  'unsupported_version',
  'buffer_overflow',
  'event_cap_reached',
  'storage_unavailable',
  'coordinator_unavailable',
  'model_not_configured',
  'model_error',
  'tool_error',
  'runner_unavailable',
  'payload_too_large',
  'rate_limited',
  'quota_exceeded',
  'too_many_concurrent_turns',
  'internal',
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

/** Codes whose failures are worth retrying unchanged. */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set([
  'conflict',
  'session_busy',
  'storage_unavailable',
  'coordinator_unavailable',
  'runner_unavailable',
])

export interface TurnlineErrorOptions {
  details?: Record<string, unknown>
  cause?: unknown
  retryable?: boolean
  /** Seconds after which a retry may succeed (surfaced as Retry-After). */
  retryAfter?: number
  /**
   * Facts for the server log only, never sent to clients (e.g. the storage key a failing call
   * touched: responses never name storage keys).
   */
  logDetails?: Record<string, unknown>
}

export class TurnlineError extends Error {
  override readonly name = 'TurnlineError'
  readonly code: ErrorCode
  readonly retryable: boolean
  readonly details: Record<string, unknown> | undefined
  readonly retryAfter: number | undefined
  readonly logDetails: Record<string, unknown> | undefined

  constructor(code: ErrorCode, message: string, options: TurnlineErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.retryable = options.retryable ?? RETRYABLE.has(code)
    this.details = options.details
    this.retryAfter = options.retryAfter
    this.logDetails = options.logDetails
  }
}

/** True for a TurnlineError with one of the given codes (works across bundle copies). */
export function isTurnlineError(value: unknown, ...codes: ErrorCode[]): value is TurnlineError {
  if (!(value instanceof Error) || value.name !== 'TurnlineError') return false
  const code = (value as TurnlineError).code
  return codes.length === 0 || codes.includes(code)
}
