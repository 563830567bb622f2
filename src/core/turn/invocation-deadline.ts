import { TurnlineError } from '../../contract/errors.ts'
import type { TimerClock } from '../../ports/clock.ts'

/**
 * How long the platform still lets this invocation run, in ms (Lambda's remaining time);
 * undefined where nothing bounds it.
 */
export type InvocationTimeLeft = () => number | undefined

/**
 * A model request or a tool round is not started with less than this left: one of either may
 * take that long (a model's answer streams for tens of seconds; a tool call is bounded by its
 * timeout, a command's wait by the invocation's budget), and the turn must still commit and
 * answer before the platform ends the invocation.
 */
export const TURN_PAUSE_MARGIN_MS = 60_000

/**
 * A turn is not run in a request with less than this left: it could not take a step before it
 * pauses (a function whose timeout is shorter than this runs turns with `respond-async` only).
 */
export const TURN_START_MIN_MS = 90_000

/** A model request still streaming with this little left is stopped: the turn commits and answers. */
export const TURN_STOP_MARGIN_MS = 10_000

/**
 * How long a tool call started now may run for the turn still to commit before the platform's
 * timeout: the time left less `TURN_STOP_MARGIN_MS`; undefined where nothing bounds it. An HTTP
 * or MCP call's timeout is cut to it, and a command's wait (the invocation budget) too.
 */
export function toolCallWindowMs(timeLeft: InvocationTimeLeft | undefined): number | undefined {
  const left = timeLeft?.()
  return left === undefined ? undefined : Math.max(0, Math.floor(left - TURN_STOP_MARGIN_MS))
}

/** What was stopped, and when, as the platform's timeout neared (a hook's error, an MCP connect's). */
export function stoppedBeforeDeadline(ms: number): string {
  return `stopped after ${ms} ms, before the platform's timeout ends the request`
}

/** The output of a call stopped before the platform's timeout: it started, so it is not rerun. */
export function stoppedCallOutput(tool: string, ms: number): string {
  return `tool ${tool} was ${stoppedBeforeDeadline(ms)}; it is not run again, as it may have taken effect`
}

/** Refuses, before anything is written, a turn step of a request with too little time left. */
export function assertTimeForTurn(timeLeft: InvocationTimeLeft | undefined): void {
  const left = timeLeft?.()
  if (left === undefined || left >= TURN_START_MIN_MS) return
  throw new TurnlineError(
    'invalid_input',
    `this request has ${Math.floor(left / 1000)} s left before the platform's timeout, under the ${TURN_START_MIN_MS / 1000} s a turn needs to run in the request: send it with Prefer: respond-async`,
    { details: { field: 'Prefer', time_left_ms: Math.floor(left) } },
  )
}

/**
 * The `paused: …` notice of a turn that stops, open, before the invocation's time runs out;
 * undefined while there is time for another step (or nothing bounds the invocation).
 */
export function pauseBeforeDeadline(timeLeft: InvocationTimeLeft | undefined): string | undefined {
  const left = timeLeft?.()
  if (left === undefined || left >= TURN_PAUSE_MARGIN_MS) return undefined
  return pausedNotice(`the request's time runs out in ${Math.max(0, Math.floor(left / 1000))} s`)
}

/** The notice of a model request stopped as the invocation's time ran out. */
export const MODEL_CALL_STOPPED = pausedNotice(
  "the request's time ran out while the model answered (that answer is not kept)",
)

/** The notice of a compaction stopped as the invocation's time ran out (compaction/timed-compaction.ts). */
export const COMPACTION_STOPPED = pausedNotice(
  "the request's time ran out while the session was compacted (nothing of that compaction is kept: the next request compacts again)",
)

function pausedNotice(why: string): string {
  return `paused: ${why} (the platform's timeout); the turn stays open: POST …/turns without input continues it; Prefer: respond-async runs long turns in the background`
}

/** The invocation's time left and the clock that looks at it: what a deadline watch needs. */
export interface InvocationDeadline {
  timeLeft: InvocationTimeLeft
  clock: TimerClock
}

/** How often work under way (a model request, a hook, an MCP connect) looks at the time left. */
const STOP_POLL_MS = 1_000

/**
 * A signal that also aborts once less than `TURN_STOP_MARGIN_MS` is left (looked at every second,
 * whether the work under way sends anything or not): a model request's, a hook run's, an MCP
 * server's connect and tool list's. `reached()` tells whether that is why it aborted. `clear()`
 * stops looking.
 */
export function deadlineWatch(
  clock: TimerClock,
  timeLeft: InvocationTimeLeft,
  signal: AbortSignal | undefined,
): { signal: AbortSignal; reached(): boolean; clear(): void } {
  const controller = new AbortController()
  let reached = false
  let cancel = () => {}
  const onAbort = () => controller.abort(signal?.reason)
  signal?.addEventListener('abort', onAbort, { once: true })
  if (signal?.aborted) onAbort()
  const look = () => {
    const left = timeLeft()
    if (left !== undefined && left < TURN_STOP_MARGIN_MS) {
      reached = true
      controller.abort(new Error("the request's time ran out"))
      return
    }
    cancel = clock.setTimer(STOP_POLL_MS, look)
  }
  look()
  return {
    signal: controller.signal,
    reached: () => reached,
    clear: () => {
      cancel()
      signal?.removeEventListener('abort', onAbort)
    },
  }
}
