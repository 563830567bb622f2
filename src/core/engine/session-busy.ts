import { TurnlineError } from '../../contract/errors.ts'
import type { HeldRetryAfter } from '../../shared/held-retry-after.ts'

/**
 * 409 `session_busy`: another turn holds the session's lease. Retry-After comes from that lease
 * (`heldRetryAfter`): a running turn is retried after a share of its age, a silent one (its
 * instance most likely died) when its lease lapses and the session can be taken over.
 */
export function sessionBusy(sessionId: string, held: HeldRetryAfter): TurnlineError {
  const retryAfter = Math.max(1, Math.ceil(held.retryAfterMs / 1000))
  const running =
    held.state === 'running'
      ? `is running another turn${held.heldForMs === undefined ? '' : ` (for ${Math.round(held.heldForMs / 1000)} s)`}`
      : 'is held by a turn that stopped renewing its lease; it lapses'
  return new TurnlineError(
    'session_busy',
    `session ${sessionId} ${running}; retry in ${retryAfter} s`,
    {
      retryAfter,
      details: {
        turn: held.state,
        retry_after_seconds: retryAfter,
        ...(held.heldForMs === undefined
          ? {}
          : { running_for_seconds: Math.floor(held.heldForMs / 1000) }),
      },
    },
  )
}
