import { backoffMs } from '../src/shared/backoff.ts'
import { TurnlineApiError, TurnlineConnectionError } from './errors.ts'

/** How a stream reconnects after its connection drops. */
export interface RetryOptions {
  /** Reconnection attempts in a row without a new event before giving up (default 5). */
  maxAttempts?: number
  /** First pause; it doubles per attempt, with jitter (default 250 ms). */
  initialDelayMs?: number
  /** Longest pause of the backoff (default 5000 ms). */
  maxDelayMs?: number
  /**
   * Longest `Retry-After` waited for (default 60 s, the tenant's request window): a server that
   * asks for a longer wait gets its error thrown at once (`retryAfterSeconds` says how long).
   */
  maxRetryAfterMs?: number
  /**
   * A stream that sends nothing at all for this long (the server sends `: keep-alive` every
   * 15 s) counts as a dropped connection and is resumed (default 60 s).
   */
  idleTimeoutMs?: number
  /**
   * A resumed turn whose first request still runs on the server answers `session_busy`; how
   * long to keep asking until it has finished (default 10 minutes).
   */
  busyTimeoutMs?: number
}

export interface RetryPolicy {
  maxAttempts: number
  initialDelayMs: number
  maxDelayMs: number
  maxRetryAfterMs: number
  idleTimeoutMs: number
  busyTimeoutMs: number
}

export function retryPolicy(options: RetryOptions = {}): RetryPolicy {
  return {
    maxAttempts: options.maxAttempts ?? 5,
    initialDelayMs: options.initialDelayMs ?? 250,
    maxDelayMs: options.maxDelayMs ?? 5000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
    busyTimeoutMs: options.busyTimeoutMs ?? 600_000,
  }
}

/**
 * The pause before attempt `attempt` (1-based): the server's Retry-After when it sent one (a
 * retry sooner would be refused again), else the backoff with ±25 % jitter. A Retry-After past
 * `maxRetryAfterMs` is not waited for: `error` itself is thrown.
 */
export function reconnectDelayMs(policy: RetryPolicy, attempt: number, error?: unknown): number {
  if (error instanceof TurnlineApiError && error.retryAfterSeconds !== undefined) {
    const ms = error.retryAfterSeconds * 1000
    if (ms > policy.maxRetryAfterMs) throw error
    return ms
  }
  return backoffMs(attempt - 1, {
    firstMs: policy.initialDelayMs,
    maxMs: policy.maxDelayMs,
    jitter: 'spread',
  })
}

/** A dropped connection, or an answer that says the same request may work later. */
export function isTransient(error: unknown): boolean {
  if (error instanceof TurnlineConnectionError) return true
  return error instanceof TurnlineApiError && error.retryable && error.code !== 'session_busy'
}
