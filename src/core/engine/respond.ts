import type { TurnResponse, TurnStatus } from '../../contract/api.ts'
import type { TurnRecord } from '../../contract/engine-state.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { markCallbacks, recordCallbacks } from '../callbacks/turn-callbacks.ts'
import { writeSessionExports } from '../exports/session-exports.ts'
import type { ServiceDeps } from './service-deps.ts'
import type { TurnWriter } from './turn-writer.ts'

export interface TurnAnswer {
  response: TurnResponse
  /** The record a retried Idempotency-Key is answered from (when the turn is remembered). */
  record?: TurnRecord
  /** Highest batch committed. */
  tip: number
  /** When it was committed (epoch ms). */
  activeAt: number
  /** The manifest write still running after the commit (never rejects): `withLease` overlaps
   * it with the coordinator's end of turn and answers when both are done. */
  settling?: Promise<void>
}

export interface TurnEnding {
  turnId: string
  status: TurnStatus
  warnings?: readonly string[]
  /** Keep the answer in the engine state's recent turn records (retries answered from there). */
  remember: boolean
}

/**
 * How every turn ends (a driven turn, a permission decision, a plan approval, a manual
 * compaction, a session end): remember its answer, commit what it wrote, then answer it. The
 * session's exports (event log, and for a finished thread its derived views) are written after
 * the commit, best effort. With a callback URL, the batch's completion notices are marked
 * before the commit and recorded after it (callbacks/turn-callbacks.ts). The manifest write after the commit point is returned as `settling`
 * (see `withLease`).
 */
export async function respond(
  deps: ServiceDeps,
  ref: SessionRef,
  writer: TurnWriter,
  ending: TurnEnding,
): Promise<TurnAnswer> {
  const { turnId, status } = ending
  const warnings = ending.warnings?.length ? { warnings: [...ending.warnings] } : {}
  const record = ending.remember
    ? writer.remember({ turn_id: turnId, status, ...warnings })
    : undefined
  const marked = await markCallbacks(deps, ref, writer)
  await writer.commit(turnId, 'turn_end')
  if (marked) await recordCallbacks(deps, ref, writer, marked, turnId)
  const events = writer.dispatcher.all()
  await writeSessionExports(deps, ref, writer.state, {
    createdAt: writer.snapshot.createdAt,
    finished: events.some((event) => event.type === 'thread.completed'),
  })
  return {
    response: { turn_id: turnId, status, events, next_seq: writer.snapshot.nextSeq, ...warnings },
    ...(record ? { record } : {}),
    tip: writer.snapshot.lastBatch,
    activeAt: Date.parse(writer.snapshot.updatedAt),
    ...(writer.manifestWritten ? { settling: writer.manifestWritten } : {}),
  }
}
