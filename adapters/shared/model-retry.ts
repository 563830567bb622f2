import type { ModelStreamEvent } from '../../src/ports/model-client.ts'
import { abortableSleep } from '../../src/shared/abortable-sleep.ts'
import { backoffMs } from '../../src/shared/backoff.ts'
import { type ModelFailure, modelError } from './model-failure.ts'

/**
 * The retry loop every model adapter runs around its SDK (whose own retries are switched off):
 * the adapter must decide per failure — a stream that already sent events is not retried, a long
 * Retry-After ends the retries and is handed to the caller as `retryAfter` — and what is left is
 * this loop, the backoff (src/shared/backoff.ts, with equal jitter) and an abortable sleep; a retry library (p-retry, async-retry)
 * would own the loop the adapter needs to own.
 */
export interface RetryTiming {
  /** First backoff step; doubles per attempt. Default 500 ms. */
  baseDelayMs?: number
  /** Upper bound of one computed backoff step. Default 8 s. */
  maxDelayMs?: number
  /**
   * Longest server-requested wait (Retry-After) the adapter sits out; a longer request ends the
   * retries at once and the error carries `retryAfter` for the caller. Default 20 s.
   */
  maxRetryAfterMs?: number
}

export const DEFAULT_RETRY_TIMING: Required<RetryTiming> = {
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 20_000,
}

/** How one adapter retries: its bound, its timing, and how it reads its SDK's errors. */
export interface ModelRetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number
  timing: Required<RetryTiming>
  classify(error: unknown): ModelFailure
  /** The caller's abort (the SDK's abort error, or the signal fired). */
  isUserAbort(error: unknown, signal: AbortSignal | undefined): boolean
}

/** The policy of `options` (maxRetries default 2, never negative; timing over the defaults). */
export function retryPolicy(
  options: { maxRetries?: number | undefined; retry?: RetryTiming | undefined },
  classify: ModelRetryPolicy['classify'],
  isUserAbort: ModelRetryPolicy['isUserAbort'],
): ModelRetryPolicy {
  return {
    maxRetries: Math.max(0, options.maxRetries ?? 2),
    timing: { ...DEFAULT_RETRY_TIMING, ...options.retry },
    classify,
    isUserAbort,
  }
}

/** A failed attempt, as the retry loop saw it. */
export interface FailedAttempt {
  error: unknown
  /** 0 for the first attempt. */
  attempt: number
  /** Whether an event of this attempt already reached the caller (then it is not retried). */
  delivered: boolean
  signal: AbortSignal | undefined
}

/** After a failed attempt: throws the error to report, or returns once the backoff has passed. */
export async function retryOrThrow(
  policy: ModelRetryPolicy,
  { error, attempt, delivered, signal }: FailedAttempt,
): Promise<void> {
  if (policy.isUserAbort(error, signal)) {
    signal?.throwIfAborted()
    throw error
  }
  const failure = policy.classify(error)
  const waitTooLong =
    failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.timing.maxRetryAfterMs
  if (delivered || !failure.retryable || waitTooLong || attempt >= policy.maxRetries) {
    throw modelError(failure, attempt + 1)
  }
  await abortableSleep(
    failure.retryAfterMs ??
      backoffMs(attempt, {
        firstMs: policy.timing.baseDelayMs,
        maxMs: policy.timing.maxDelayMs,
        jitter: 'equal',
      }),
    signal,
  )
}

/**
 * Streams `attempt()` again after a retryable failure, as long as no event has reached the
 * caller yet; an event delivered commits the stream to this attempt.
 */
export async function* retryingStream(
  policy: ModelRetryPolicy,
  signal: AbortSignal | undefined,
  attempt: () => AsyncIterable<ModelStreamEvent>,
): AsyncGenerator<ModelStreamEvent> {
  for (let tries = 0; ; tries++) {
    let delivered = false
    try {
      signal?.throwIfAborted()
      for await (const event of attempt()) {
        delivered = true
        yield event
      }
      return
    } catch (error) {
      await retryOrThrow(policy, { error, attempt: tries, delivered, signal })
    }
  }
}

/** Calls `attempt()` again after a retryable failure. */
export async function retryingCall<T>(
  policy: ModelRetryPolicy,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      signal?.throwIfAborted()
      return await attempt()
    } catch (error) {
      await retryOrThrow(policy, { error, attempt: tries, delivered: false, signal })
    }
  }
}
