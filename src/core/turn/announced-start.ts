import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { TurnOptions } from '../session-api.ts'

/**
 * The turn options of a run that starts its own session (an exec run, a response): its
 * `thread.started` goes to `onEvent` with the turn's first event, not before the turn. A call
 * refused before its turn starts — 409 `session_busy` while the first request with the same
 * Idempotency-Key still runs — is then a plain error answer, never a stream that started and
 * failed for a run that is in fact running.
 */
export function announcingStart(options: TurnOptions, started: ThreadEvent): TurnOptions {
  const { onEvent } = options
  if (!onEvent) return options
  let announced = false
  return {
    ...options,
    onEvent: (event, seq, line) => {
      if (!announced) onEvent(started, 0)
      announced = true
      onEvent(event, seq, line)
    },
  }
}
