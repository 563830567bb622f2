import type { Batch } from '../contract/batch.ts'
import { parseStoredBatch } from '../contract/batch-encoding.ts'
import { type Checkpoint, parseCheckpoint } from '../contract/checkpoint.ts'
import { isDeletedMarker } from '../contract/deleted-marker.ts'
import { TurnlineError } from '../contract/errors.ts'
import type { HistoryMessage } from '../contract/history-message.ts'
import { parseSessionManifest } from '../contract/session-manifest.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import type { SessionKeys, SessionRef } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'
import {
  emptySnapshot,
  foldBatch,
  foldHistory,
  snapshotFromCheckpoint,
} from './session-snapshot.ts'

/**
 * Folds a session to its last committed batch: manifest → probe forward for batches beyond
 * max(manifest, tip hint) → newest checkpoint → the batches after it. Reads O(segment): one
 * checkpoint plus the few batches since, never the whole log (unless the manifest is missing
 * and the log must be refolded from batch 0). With a `cached` snapshot it only probes and folds
 * what was committed after it.
 */
export async function rehydrate(
  store: ObjectStore,
  keys: SessionKeys,
  ref: SessionRef,
  options: { cached?: SessionSnapshot } = {},
): Promise<SessionSnapshot> {
  const { cached } = options
  if (cached) {
    // Warm path: one LIST tells whether anything was committed since; fold only that.
    // Lists from the cached batch itself: a session deleted meanwhile is not_found, never served
    // from the cache.
    const last = await probeLastBatch(store, keys, cached.lastBatch)
    let snapshot = cached
    const numbers = Array.from(
      { length: last - cached.lastBatch },
      (_, i) => cached.lastBatch + 1 + i,
    )
    for (const batch of await readBatches(store, keys, numbers)) snapshot = fold(snapshot, batch)
    return snapshot
  }
  const stored = await store.get(keys.manifest)
  const manifest = stored
    ? { value: parseSessionManifest(stored.body), etag: stored.etag }
    : undefined
  if (manifest && manifest.value.session_id !== ref.sessionId) {
    throw new TurnlineError(
      'corrupt_data',
      `the manifest of session ${ref.sessionId} names session ${manifest.value.session_id}`,
    )
  }
  const last = await probeLastBatch(store, keys, manifest?.value.last_batch ?? -1)
  if (last < 0) {
    throw new TurnlineError('not_found', `session ${ref.sessionId} not found`)
  }

  let snapshot: SessionSnapshot
  const checkpointBatch = manifest?.value.checkpoint_batch
  const checkpoint =
    checkpointBatch !== undefined && checkpointBatch <= last
      ? await store.get(keys.checkpoint(checkpointBatch))
      : null
  const batchNumbers = (from: number) => Array.from({ length: last - from }, (_, i) => from + 1 + i)

  if (checkpoint && manifest) {
    const read = parseCheckpoint(checkpoint.body)
    const [history, after] = await Promise.all([
      checkpointHistory(store, keys, read),
      readBatches(store, keys, batchNumbers(read.batch)),
    ])
    if (history) {
      const threadId = manifest.value.thread_id
      snapshot = snapshotFromCheckpoint(ref, threadId, read, manifest, history)
      for (const batch of after) snapshot = fold(snapshot, batch)
      return snapshot
    }
  }

  const batches = await readBatches(store, keys, batchNumbers(-1))
  const first = batches[0]
  if (!first) throw new TurnlineError('not_found', `session ${ref.sessionId} not found`)
  const threadId = manifest?.value.thread_id ?? threadIdOf(first)
  snapshot = emptySnapshot(
    ref,
    threadId,
    manifest?.value.created_at ?? first.committed_at,
    manifest,
  )
  for (const batch of batches) snapshot = fold(snapshot, batch)
  return snapshot
}

/** How many checkpoints a transcript is followed through (each names the one before it). */
const MAX_NAMED_CHECKPOINTS = 4

/**
 * A checkpoint's transcript: the one it holds, or the one it names (`history_from`): the
 * transcript of the checkpoint named, followed by the deltas of the batches named, read in
 * parallel. Undefined when a checkpoint named is missing (derived data: the caller folds the log
 * from the start instead).
 */
async function checkpointHistory(
  store: ObjectStore,
  keys: SessionKeys,
  checkpoint: Checkpoint,
  depth = 0,
): Promise<HistoryMessage[] | undefined> {
  const from = checkpoint.history_from
  if (!from) return checkpoint.history ?? []
  if (depth >= MAX_NAMED_CHECKPOINTS) {
    throw new TurnlineError('corrupt_data', `checkpoint ${checkpoint.batch} names too many others`)
  }
  const numbers = Array.from(
    { length: checkpoint.batch - from.batch + 1 },
    (_, i) => from.batch + i,
  )
  const [base, batches] = await Promise.all([
    from.checkpoint === undefined
      ? []
      : store
          .get(keys.checkpoint(from.checkpoint))
          .then((object) =>
            object
              ? checkpointHistory(store, keys, parseCheckpoint(object.body), depth + 1)
              : undefined,
          ),
    readBatches(store, keys, numbers),
  ])
  return base && batches.reduce(foldHistory, base)
}

/**
 * The highest committed batch, listing the log from `known`: a batch the store itself says was
 * committed (a cached snapshot's or the manifest's last batch; -1 for none). `known` must still
 * be there. A log whose tail is gone belongs to a deleted session (retention deletes a log from
 * its last batch down), which is not_found; a hole below later batches is corrupt data.
 */
export async function probeLastBatch(
  store: ObjectStore,
  keys: SessionKeys,
  known: number,
): Promise<number> {
  const page = await listAll(
    store,
    keys.logPrefix,
    known >= 1 ? { startAfter: keys.batch(known - 1) } : {},
  )
  let last = -1
  let present = known < 0
  for (const object of page.objects) {
    const n = keys.batchNumber(object.key)
    if (n === undefined) continue
    if (n === known) present = true
    if (n > last) last = n
  }
  if (!present) throw await missingBatch(store, keys, known, last)
  return Math.max(last, known)
}

/** Reads batches by number, in parallel; every one must exist and parse. */
export async function readBatches(
  store: ObjectStore,
  keys: SessionKeys,
  numbers: number[],
): Promise<Batch[]> {
  const objects = await Promise.all(numbers.map((n) => store.get(keys.batch(n))))
  const absent = numbers.find((_, i) => !objects[i])
  if (absent !== undefined) {
    const page = await listAll(store, keys.logPrefix, { startAfter: keys.batch(absent) })
    const highest = page.objects.reduce(
      (max, o) => Math.max(max, keys.batchNumber(o.key) ?? -1),
      -1,
    )
    throw await missingBatch(store, keys, absent, highest)
  }
  return Promise.all(
    objects.map(async (object, i) => {
      const n = numbers[i] as number
      const body = (object as { body: Uint8Array }).body
      const batch = await parseStoredBatch(body).catch((error: unknown) => {
        throw isDeletedMarker(body) ? deleted(keys, n) : error
      })
      if (batch.batch !== n) {
        throw new TurnlineError(
          'corrupt_data',
          `batch ${n} of session ${keys.sessionId} claims to be batch ${batch.batch}`,
        )
      }
      return batch
    }),
  )
}

/**
 * A committed batch that is not there: the session was deleted — its log erased from the tail
 * down, or up to the deleted-session marker that `DELETE` leaves after it (read through a
 * location another process cached before the delete) — or (a hole) its log is damaged.
 */
async function missingBatch(
  store: ObjectStore,
  keys: SessionKeys,
  batch: number,
  highestListed: number,
): Promise<TurnlineError> {
  if (highestListed < batch) {
    return new TurnlineError('not_found', `session ${keys.sessionId} not found`, {
      logDetails: { reason: 'log tail missing (deleted by retention?)', batch },
    })
  }
  const highest = await store.get(keys.batch(highestListed))
  if (highest && isDeletedMarker(highest.body)) return deleted(keys, highestListed)
  return new TurnlineError(
    'corrupt_data',
    `batch ${batch} of session ${keys.sessionId} is missing while later batches exist`,
  )
}

/** The deleted-session marker (delete-fence.ts) where a batch was read: the session is gone. */
function deleted(keys: SessionKeys, batch: number): TurnlineError {
  return new TurnlineError('not_found', `session ${keys.sessionId} not found`, {
    logDetails: { reason: 'session deleted (its log is fenced)', batch },
  })
}

function fold(snapshot: SessionSnapshot, batch: Batch): SessionSnapshot {
  if (batch.first_seq !== snapshot.nextSeq) {
    throw new TurnlineError(
      'corrupt_data',
      `batch ${batch.batch} starts at seq ${batch.first_seq}, expected ${snapshot.nextSeq}`,
    )
  }
  return foldBatch(snapshot, batch)
}

function threadIdOf(batch: Batch): string {
  for (const line of batch.events) {
    const event = line.event
    if (event.type === 'thread.started' && 'thread_id' in event) return String(event.thread_id)
  }
  throw new TurnlineError('corrupt_data', 'batch 0 does not start the thread (no thread.started)')
}
