import { TurnlineError } from '../contract/errors.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { readBatches } from './rehydrate.ts'
import type { SessionKeys, SessionRef } from './session-ref.ts'
import { emptySnapshot, foldBatch, type SessionSnapshot } from './session-snapshot.ts'

/** Batches read at once while the log is folded. */
const CHUNK = 16

/**
 * The session folded through the batch that ended turn `turnId` (its `turn.completed` or
 * `turn.failed`): the transcript and state as that turn left them. The log is folded from batch 0
 * (a fork at a turn is rare; the batches are kept for the session's life), so it costs one read
 * per batch up to that turn. Refused (`invalid_input`, field `at_turn`) for a turn the session
 * never started, one that has not ended yet, and one whose end shares its batch with the next
 * turn's start (a turn closed as interrupted when the next began: its transcript cannot be told
 * apart from the next turn's).
 */
export async function snapshotAfterTurn(
  objects: ObjectStore,
  keys: SessionKeys,
  ref: SessionRef,
  from: { threadId: string; createdAt: string; lastBatch: number },
  turnId: string,
): Promise<SessionSnapshot> {
  let snapshot = emptySnapshot(ref, from.threadId, from.createdAt, undefined)
  let open: string | undefined
  let started = false
  for (let next = 0; next <= from.lastBatch; next += CHUNK) {
    const numbers = Array.from(
      { length: Math.min(CHUNK, from.lastBatch - next + 1) },
      (_, i) => next + i,
    )
    for (const batch of await readBatches(objects, keys, numbers)) {
      snapshot = foldBatch(snapshot, batch)
      let ended = false
      for (const { event } of batch.events) {
        if (event.type === 'turn.started') {
          if (ended) throw refused(`${turnId} was interrupted by the next turn's start`)
          open = batch.turn_id
          started ||= open === turnId
        } else if (event.type === 'turn.completed' || event.type === 'turn.failed') {
          ended ||= open === turnId
          open = undefined
        }
      }
      if (ended) return snapshot
    }
  }
  throw refused(started ? `${turnId} has not ended yet` : `the session has no ${turnId}`)
}

function refused(why: string): TurnlineError {
  return new TurnlineError('invalid_input', `at_turn: ${why}`, {
    details: { field: 'body.at_turn' },
  })
}
