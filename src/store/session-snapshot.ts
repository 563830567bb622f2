import type { Batch } from '../contract/batch.ts'
import {
  CHECKPOINT_FORMAT,
  CHECKPOINT_VERSION,
  type Checkpoint,
  type HistoryFrom,
} from '../contract/checkpoint.ts'
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
  /**
   * Where the stored objects hold `history`: the newest checkpoint that holds a transcript (or
   * none: the segment started since) and the first batch whose delta follows it. A checkpoint
   * names this instead of writing the transcript again (`checkpointOf`).
   */
  historyFrom: HistoryFrom
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
  const history = foldHistory(snapshot.history, batch)
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
    historyFrom: batch.history?.reset ? { batch: batch.batch } : snapshot.historyFrom,
  }
}

/** A transcript with one batch's delta applied (a delta that resets starts over). */
export function foldHistory(history: HistoryMessage[], batch: Batch): HistoryMessage[] {
  if (!batch.history) return history
  return batch.history.reset ? [...batch.history.append] : [...history, ...batch.history.append]
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

/**
 * The snapshot a checkpoint stands for; `history`: its transcript, when it names it
 * (`history_from`) rather than holding it.
 */
export function snapshotFromCheckpoint(
  ref: SessionRef,
  threadId: string,
  checkpoint: Checkpoint,
  manifest: SessionSnapshot['manifest'],
  history: HistoryMessage[] = checkpoint.history ?? [],
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
    history,
    state: checkpoint.state,
    appliedIntents: checkpoint.applied_intents,
    checkpointBatch: checkpoint.batch,
    batchesSinceCheckpoint: 0,
    historyFrom: checkpoint.history_from ?? fromCheckpoint(checkpoint.batch),
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
    historyFrom: { batch: 0 },
    manifest,
  }
}

/**
 * The most batches a checkpoint names for its transcript instead of writing it: a cold reader
 * reads them besides the (at most `checkpointEvery`) batches after the checkpoint.
 */
export const CHECKPOINT_HISTORY_BATCHES = 48

/** A transcript held by the checkpoint at `batch`, followed by nothing yet. */
function fromCheckpoint(batch: number): HistoryFrom {
  return { checkpoint: batch, batch: batch + 1 }
}

/**
 * A checkpoint of the snapshot (written create-only at `state/<lastBatch>`). Its transcript is
 * named (`history_from`) while the batches that hold it number at most `historyBatches` — the
 * most a reader of the checkpoint reads for it — and written whole otherwise.
 */
export function checkpointOf(snapshot: SessionSnapshot, historyBatches = 0): Checkpoint {
  const { historyFrom } = snapshot
  const named = snapshot.lastBatch - historyFrom.batch + 1 <= historyBatches
  return {
    format: CHECKPOINT_FORMAT,
    version: CHECKPOINT_VERSION,
    batch: snapshot.lastBatch,
    next_seq: snapshot.nextSeq,
    turn_count: snapshot.turnCount,
    status: snapshot.status,
    ...(named ? { history_from: historyFrom } : { history: snapshot.history }),
    ...(snapshot.state ? { state: snapshot.state } : {}),
    applied_intents: snapshot.appliedIntents,
    created_at: snapshot.createdAt,
    updated_at: snapshot.updatedAt,
    ...(snapshot.title === undefined ? {} : { title: snapshot.title }),
  }
}

/** The snapshot once `checkpoint` of it is stored. */
export function checkpointed(snapshot: SessionSnapshot, checkpoint: Checkpoint): SessionSnapshot {
  return {
    ...snapshot,
    checkpointBatch: checkpoint.batch,
    batchesSinceCheckpoint: 0,
    historyFrom: checkpoint.history_from ?? fromCheckpoint(checkpoint.batch),
  }
}
