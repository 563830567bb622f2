import type { TurnResponse } from '../../contract/api.ts'
import type { TurnRecord } from '../../contract/engine-state.ts'
import { TurnRecordSchema } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from './service-deps.ts'

/** Rebuilds the first answer of a turn from its committed batches. */
export async function replay(
  deps: ServiceDeps,
  ref: SessionRef,
  stored: TurnRecord | string,
): Promise<TurnResponse> {
  const record = typeof stored === 'string' ? TurnRecordSchema.parse(JSON.parse(stored)) : stored
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

export function completedError(ref: SessionRef): TurnlineError {
  return new TurnlineError(
    'session_completed',
    `session ${ref.sessionId} has completed (thread.completed was recorded); start a new session`,
  )
}
