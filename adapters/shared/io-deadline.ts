import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
import type { TimerClock } from '../../src/ports/clock.ts'
import { backoffMs } from '../../src/shared/backoff.ts'
import { sleepOn } from '../../src/shared/sleep-on.ts'
import { systemClock } from '../../src/shared/system-clock.ts'

/**
 * Deadlines of the network adapters' calls (S3 storage, the Upstash coordinator): every call
 * gives up an attempt after `attemptMs`, retries what is safe to retry (timeouts and retryable
 * unavailability) while `budgetMs` lasts, then fails with a retryable 503 code carrying
 * Retry-After. So a frozen backend ends the request in bounded time instead of hanging it past
 * its lease. Every call these adapters make is safe to resend: reads, create-only and If-Match
 * writes (the session log tells its own resent write from a rival's), and the coordinator's
 * scripts.
 */
export interface IoDeadline {
  /** Longest one attempt may take before it is abandoned (ms). */
  attemptMs: number
  /** Longest one call may take across its attempts (ms); then it fails. */
  budgetMs: number
}

export const DEFAULT_STORAGE_DEADLINE: IoDeadline = { attemptMs: 5_000, budgetMs: 15_000 }
export const DEFAULT_COORDINATOR_DEADLINE: IoDeadline = { attemptMs: 3_000, budgetMs: 15_000 }

export interface DeadlineCall {
  deadline: IoDeadline
  /** The code of the final failure (a 503). */
  code: 'storage_unavailable' | 'coordinator_unavailable'
  /** Who did not answer, for the message: "the session store", "the coordinator". */
  service: string
  operation: string
  /** Times the attempts and the pauses between them (default: the system clock). */
  clock?: TimerClock
}

const TIMED_OUT = Symbol('timed out')
/**
 * How much longer than `attemptMs` an attempt is awaited: an adapter that aborts its own request
 * after `attemptMs` (the Upstash client's per-request signal) gets to do so first, so an
 * abandoned request is really cancelled rather than left in flight.
 */
const GRACE_MS = 25
/** The pauses between attempts: 100 ms doubling to at most 1 s. */
const PAUSES = { firstMs: 100, maxMs: 1_000, jitter: 'none' } as const

/**
 * Runs `attempt` under the call's deadline; it gets a signal that aborts when its time is up.
 * Each attempt gets `attemptMs`; another starts only while it can end within `budgetMs`.
 */
export async function withDeadline<T>(
  call: DeadlineCall,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { attemptMs, budgetMs } = call.deadline
  const clock = call.clock ?? systemClock
  const started = clock.now()
  let attempts = 0
  let last: unknown = TIMED_OUT
  for (;;) {
    attempts += 1
    const controller = new AbortController()
    let cancel: (() => void) | undefined
    const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
      cancel = clock.setTimer(attemptMs + GRACE_MS, () => {
        controller.abort(new Error(`${call.service} ${call.operation} timed out`))
        resolve(TIMED_OUT)
      })
    })
    try {
      const outcome = await Promise.race([attempt(controller.signal), timeout])
      if (outcome !== TIMED_OUT) return outcome
      last = TIMED_OUT
    } catch (error) {
      if (!isTurnlineError(error, call.code) || !error.retryable) throw error
      last = error
    } finally {
      cancel?.()
    }
    const pause = backoffMs(attempts - 1, PAUSES)
    if (clock.now() - started + pause + attemptMs > budgetMs) break
    await sleepOn(clock, pause)
  }
  throw giveUp(call, attempts, clock.now() - started, last)
}

function giveUp(call: DeadlineCall, attempts: number, elapsed: number, last: unknown) {
  const retryAfter = Math.max(1, Math.ceil(call.deadline.attemptMs / 1000))
  const tries = `${attempts} attempt${attempts === 1 ? '' : 's'} in ${elapsed} ms`
  if (last === TIMED_OUT) {
    return new TurnlineError(
      call.code,
      `${call.service} did not answer ${call.operation} within ${call.deadline.attemptMs} ms ` +
        `(${tries}); retry later`,
      {
        retryable: true,
        retryAfter,
        details: { operation: call.operation, reason: 'timeout', attempts },
      },
    )
  }
  const error = last as TurnlineError
  return new TurnlineError(call.code, `${error.message} (${tries}); retry later`, {
    retryable: true,
    retryAfter: error.retryAfter ?? retryAfter,
    cause: error,
    ...(error.details ? { details: { ...error.details, attempts } } : {}),
    ...(error.logDetails ? { logDetails: error.logDetails } : {}),
  })
}

/** Checks a deadline's numbers (adapter options). */
export function checkDeadline(name: string, deadline: IoDeadline): void {
  const ok = (n: number) => Number.isSafeInteger(n) && n > 0
  if (!ok(deadline.attemptMs) || !ok(deadline.budgetMs) || deadline.budgetMs < deadline.attemptMs) {
    throw new TurnlineError(
      'invalid_input',
      `${name}: attemptMs and budgetMs must be positive integers, budgetMs at least attemptMs`,
      { details: { ...deadline } },
    )
  }
}
