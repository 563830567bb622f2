import type { Batch } from '../contract/batch.ts'
import { CHECKPOINT_FORMAT, CHECKPOINT_VERSION, type Checkpoint } from '../contract/checkpoint.ts'
import type { HistoryMessage } from '../contract/history-message.ts'
import type { SessionManifest } from '../contract/session-manifest.ts'
import { readableTurnInput, titleOf } from '../contract/turn-input-record.ts'
import type { SessionRef } from './session-ref.ts'

/** Newest applied intent ids kept (VT Code MAX_APPLIED_FOLLOW_UP_INTENT_IDS). */
export const APPLIED_INTENT_WINDOW = 64

export type SessionStatus = 'active' | 'completed'

/**
 * The folded state of one session at its last committed batch: what a turn needs to continue.
 * Built from the newest checkpoint plus the batches after it, so its cost follows the current
 * segment, not the whole history.
 */
export interface SessionSnapshot {
  ref: SessionRef
  threadId: string
  status: SessionStatus
  createdAt: string
  updatedAt: string
  /** Completed turns (turn.completed / turn.failed seen). */
  turnCount: number
  /** The first recorded turn input, trimmed (`titleOf`); undefined until a turn recorded text. */
  title?: string
  lastBatch: number
  /** Seq the next committed event gets (= events committed so far). */
  nextSeq: number
  /** Transcript of the current request segment. */
  history: HistoryMessage[]
  /** Opaque state owned by the turn engine: each batch's `state` is shallow-merged over it. */
  state: Record<string, unknown> | undefined
  /** Newest applied intent ids, oldest first, at most APPLIED_INTENT_WINDOW. */
  appliedIntents: string[]
  /** Checkpoint the snapshot was folded from, and what accumulated since. */
  checkpointBatch: number | undefined
  batchesSinceCheckpoint: number
  /** The manifest as read (with its etag), for compare-and-swap; undefined if missing. */
  manifest: { value: SessionManifest; etag: string } | undefined
}

/** Applies one committed batch to a snapshot (pure; returns a new snapshot). */
export function foldBatch(snapshot: SessionSnapshot, batch: Batch): SessionSnapshot {
  let { status, turnCount } = snapshot
  for (const line of batch.events) {
    const type = line.event.type
    if (type === 'thread.completed') status = 'completed'
    else if ((type === 'thread.started' || type === 'turn.started') && status !== 'completed')
      status = 'active'
    if (type === 'turn.completed' || type === 'turn.failed') turnCount += 1
  }
  const history = batch.history
    ? batch.history.reset
      ? [...batch.history.append]
      : [...snapshot.history, ...batch.history.append]
    : snapshot.history
  const title = snapshot.title ?? batchTitle(batch)
  return {
    ...snapshot,
    status,
    turnCount,
    ...(title === undefined ? {} : { title }),
    lastBatch: batch.batch,
    nextSeq: batch.first_seq + batch.events.length,
    updatedAt: batch.committed_at,
    history,
    state: batch.state ? { ...snapshot.state, ...batch.state } : snapshot.state,
    appliedIntents: mergeApplied(snapshot.appliedIntents, batch.applied_intents ?? []),
    batchesSinceCheckpoint: snapshot.batchesSinceCheckpoint + 1,
  }
}

/** The title a batch's recorded turn input gives a session that has none yet. */
export function batchTitle(batch: Batch): string | undefined {
  const record = readableTurnInput(batch.turn_input)
  return record === undefined ? undefined : titleOf(record)
}

/** Dedup-merges applied ids, keeping the newest APPLIED_INTENT_WINDOW. */
export function mergeApplied(window: readonly string[], added: readonly string[]): string[] {
  if (added.length === 0) return [...window]
  const addedSet = new Set(added)
  const merged = [...window.filter((id) => !addedSet.has(id)), ...new Set(added)]
  return merged.slice(-APPLIED_INTENT_WINDOW)
}

/** The snapshot a checkpoint stands for. */
export function snapshotFromCheckpoint(
  ref: SessionRef,
  threadId: string,
  checkpoint: Checkpoint,
  manifest: SessionSnapshot['manifest'],
): SessionSnapshot {
  return {
    ref,
    threadId,
    status: checkpoint.status,
    createdAt: checkpoint.created_at,
    updatedAt: checkpoint.updated_at,
    turnCount: checkpoint.turn_count,
    ...(checkpoint.title === undefined ? {} : { title: checkpoint.title }),
    lastBatch: checkpoint.batch,
    nextSeq: checkpoint.next_seq,
    history: checkpoint.history,
    state: checkpoint.state,
    appliedIntents: checkpoint.applied_intents,
    checkpointBatch: checkpoint.batch,
    batchesSinceCheckpoint: 0,
    manifest,
  }
}

/** The snapshot before batch 0. */
export function emptySnapshot(
  ref: SessionRef,
  threadId: string,
  createdAt: string,
  manifest: SessionSnapshot['manifest'],
): SessionSnapshot {
  return {
    ref,
    threadId,
    status: 'active',
    createdAt,
    updatedAt: createdAt,
    turnCount: 0,
    lastBatch: -1,
    nextSeq: 0,
    history: [],
    state: undefined,
    appliedIntents: [],
    checkpointBatch: undefined,
    batchesSinceCheckpoint: 0,
    manifest,
  }
}

/** A checkpoint of the snapshot (written create-only at `state/<lastBatch>`). */
export function checkpointOf(snapshot: SessionSnapshot): Checkpoint {
  return {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    batch: snapshot.lastBatch,
    next_seq: snapshot.nextSeq,
    turn_count: snapshot.turnCount,
    status: snapshot.status,
    history: snapshot.history,
    ...(snapshot.state ? { state: snapshot.state } : {}),
    applied_intents: snapshot.appliedIntents,
    created_at: snapshot.createdAt,
    updated_at: snapshot.updatedAt,
    ...(snapshot.title === undefined ? {} : { title: snapshot.title }),
  }
}
