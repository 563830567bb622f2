/** How a retry loop waits: a first step that doubles per retry, up to a cap, and its jitter. */
export interface Backoff {
  /** The pause before the first retry (ms). */
  firstMs: number
  /** The longest pause (ms); none when absent. */
  maxMs?: number
  /**
   * How the step is spread, so that many callers do not retry in step: `none` waits the step
   * exactly, `equal` a uniform pick in [step/2, step], `spread` within ±25 % of it (rounded),
   * `full` a whole number of ms in [0, step) (the AWS SDK's standard retry mode).
   */
  jitter: 'none' | 'equal' | 'spread' | 'full'
}

/**
 * The one backoff formula of the code base: the pause before retry `retry` (0 for the first)
 * is `firstMs · 2^retry`, capped at `maxMs`, then spread by the jitter. Model adapters, the
 * store's call deadlines, the client's reconnects, the runner's restarts and exit callbacks and
 * the sandbox runner's retries and the S3 client's all wait by it.
 */
export function backoffMs(retry: number, backoff: Backoff, random: () => number = Math.random) {
  const step = Math.min(backoff.maxMs ?? Number.POSITIVE_INFINITY, backoff.firstMs * 2 ** retry)
  switch (backoff.jitter) {
    case 'none':
      return step
    case 'equal':
      return step / 2 + random() * (step / 2)
    case 'spread':
      return Math.round(step * (0.75 + random() * 0.5))
    case 'full':
      return Math.floor(random() * step)
  }
}
