import type { TurnResponse } from '../../contract/api.ts'
import type { TurnRecord } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from './service-deps.ts'

/** Rebuilds the first answer of a turn from its committed batches. */
export async function replay(
  deps: ServiceDeps,
  ref: SessionRef,
  record: TurnRecord,
): Promise<TurnResponse> {
  const { events, nextSeq } = await deps.sessions.batchEvents(
    ref,
    record.first_batch,
    record.last_batch,
  )
  return {
    turn_id: record.turn_id,
    status: record.status,
    events,
    next_seq: nextSeq,
    ...(record.warnings ? { warnings: record.warnings } : {}),
  }
}

/**
 * What followed a turn left open (paused, or waiting) that the tenant finished by hand since —
 * `POST …/turns` continued it to its end, or `POST …/cancel` ended it, completing the session —
 * as a record under `key`: the batches after it, up to the session's last, `terminal`.
 */
export function finishedAfter(open: TurnRecord, key: string, lastBatch: number): TurnRecord {
  const { turn_id, last_batch } = open
  return { key, turn_id, status: 'terminal', first_batch: last_batch + 1, last_batch: lastBatch }
}

export function completedError(ref: SessionRef): TurnlineError {
  return new TurnlineError(
    'session_completed',
    `session ${ref.sessionId} has completed (thread.completed was recorded); start a new session`,
  )
}
