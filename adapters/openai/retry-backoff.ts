/**
 * Backoff for the model adapter's retries. Kept as our own code on purpose: the `openai` SDK's
 * own retries are switched off because the adapter must decide per failure (a stream that already
 * sent events is not retried, a long Retry-After ends the retries and is handed to the caller as
 * `retryAfter`), and what is left is this one formula and an abortable sleep; a retry library
 * (p-retry, async-retry) would own the loop the adapter needs to own.
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

/** Exponential backoff with "equal jitter": a uniform pick in [step/2, step]. */
export function backoffDelayMs(
  attempt: number,
  timing: Required<RetryTiming>,
  random: () => number = Math.random,
): number {
  const step = Math.min(timing.maxDelayMs, timing.baseDelayMs * 2 ** attempt)
  return step / 2 + random() * (step / 2)
}
