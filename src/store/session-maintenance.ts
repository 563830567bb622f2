import { type Checkpoint, serializeCheckpoint } from '../contract/checkpoint.ts'
import { isTurnlineError, TurnlineError } from '../contract/errors.ts'
import type { SessionManifest } from '../contract/session-manifest.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { appendCommitted, currentEventsFile, syncEventsFile } from './events-file.ts'
import { appendingStore, type EventsFile, fileRollup } from './events-file-state.ts'
import { toBytes } from './json-bytes.ts'
import { manifestOf, rollupStateOf, syncManifest } from './manifest-sync.ts'
import { type KnownBatch, type RollupState, rollup } from './rollup.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'
import { CHECKPOINT_HISTORY_BATCHES, checkpointed, checkpointOf } from './session-snapshot.ts'
import type { SnapshotCache } from './snapshot-cache.ts'

/** What the maintenance after a commit works with: the store and its per-process cache. */
export interface MaintenanceContext {
  objects: ObjectStore
  cache: SnapshotCache
  checkpointEvery: number
  /** The most batches a checkpoint names for its transcript (default CHECKPOINT_HISTORY_BATCHES). */
  historyBatches?: number | undefined
  maxRetained: number
}

/** A snapshot whose checkpoint and rollup are done, and the manifest that describes it. */
export interface PreparedManifest {
  snapshot: SessionSnapshot
  manifest: SessionManifest
  /** Whether the manifest must be written now (see `manifestDue`). */
  due: boolean
  /** On a store that appends: the events.jsonl the manifest describes (synced before it). */
  events?: EventsFile
  /** Objects to delete once the manifest is in force (parts it no longer lists: event-parts.ts). */
  obsolete?: string[]
  /** The checkpoint's put, when the manifest was prepared once it had its name (see below). */
  checkpointWritten?: Promise<unknown>
}

/**
 * A checkpoint being written: `named` once it can be read under its key (or its put is done,
 * on a store that does not tell), `written` once its put is done (its name made durable).
 */
export interface CheckpointWrite {
  named: Promise<Checkpoint>
  written: Promise<Checkpoint>
}

/**
 * Whether a commit writes the manifest. Not after every batch: readers take the manifest as a
 * lower bound and probe the log forward (DESIGN §3), so an active session's manifest is written
 * only when it would otherwise miss something a reader cannot get from the log's tail — the
 * first manifest, a new checkpoint, a rollup (a new part of the events; on a store that appends,
 * a cut of old turns), the session's end (`force`) — or when it lags by `checkpointEvery`
 * batches (a checkpoint that could not be written). Between those, a turn's commit is its batch
 * (and, on a store that appends, its lines appended to events.jsonl).
 */
export function manifestDue(
  snapshot: SessionSnapshot,
  next: SessionManifest,
  checkpointEvery: number,
  force: boolean,
): boolean {
  const stored = snapshot.manifest?.value
  if (force || !stored || stored.status !== next.status) return true
  // Appended lines need no manifest; a rewrite does (it moves what the file starts with).
  const rewritten =
    next.events_bytes === undefined
      ? stored.rolled_through !== next.rolled_through || stored.rollup_etag !== next.rollup_etag
      : stored.rolled_head_seq !== next.rolled_head_seq || stored.events_bytes === undefined
  return (
    stored.checkpoint_batch !== next.checkpoint_batch ||
    rewritten ||
    next.last_batch - stored.last_batch >= checkpointEvery
  )
}

/**
 * Everything after the commit point but the manifest: a checkpoint (every N batches or after a
 * history reset) and events.jsonl brought up to the snapshot — side by side, as they touch
 * different objects. The manifest's counts describe events.jsonl, so it is written only when the
 * file holds every event it counts:
 *
 * - on a store that appends, the commit appended the batch's lines already (events-file.ts);
 *   here the file is only brought up to date if that failed or this process does not know it;
 * - on the others (S3), the events since the last rollup are written as one part (rollup.ts,
 *   event-parts.ts) whenever the manifest is to be written anyway (a checkpoint, the session's
 *   end, no manifest yet, a lag of N batches), so they lag the log by less than
 *   `checkpointEvery` batches and never cost a manifest write of their own.
 *
 * Every write is create-only or compare-and-swap (or an append at a checked size), so a writer
 * that lost its lease meanwhile cannot overwrite a newer version.
 */
export async function prepareManifest(
  ctx: MaintenanceContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  historyReset: boolean,
  force: boolean,
  appended?: EventsFile,
  started?: CheckpointWrite,
): Promise<PreparedManifest> {
  const checkpointing = checkpointDue(ctx, snapshot, historyReset)
  const appending = appendingStore(ctx.objects)
  const current = appended?.through === snapshot.nextSeq ? appended : undefined
  const eventsFile = appending
    ? current
      ? Promise.resolve(current)
      : currentEventsFile({ ...ctx, objects: appending }, keys, snapshot)
    : undefined
  const file = eventsFile?.then(fileRollup)
  file?.catch(() => undefined)
  const before = rollupStateOf(snapshot.manifest?.value)
  const writing =
    checkpointing || manifestDue(snapshot, manifestOf(snapshot, before), ctx.checkpointEvery, force)
  const [checkpoint, rolled] = await Promise.allSettled([
    started?.named ?? (checkpointing ? writeCheckpoint(ctx, keys, snapshot) : undefined),
    file ??
      (writing && before.rolledThrough < snapshot.nextSeq
        ? rollUp(ctx, keys, snapshot, before)
        : { state: before, obsolete: [] }),
  ])
  if (checkpoint.status === 'rejected') throw checkpoint.reason
  if (rolled.status === 'rejected') throw rolled.reason
  const next = checkpoint.value ? checkpointed(snapshot, checkpoint.value) : snapshot
  const { state, obsolete } =
    'state' in rolled.value ? rolled.value : { state: rolled.value, obsolete: [] }
  const manifest = manifestOf(next, state)
  // Never a manifest that counts events events.jsonl does not hold (a rollup that lost a race).
  const holdsAll = state.rolledThrough === next.nextSeq
  if (force && !holdsAll) {
    throw new TurnlineError('conflict', 'events.jsonl changed while it was being rolled up')
  }
  const due = holdsAll && manifestDue(next, manifest, ctx.checkpointEvery, force)
  return {
    snapshot: next,
    manifest,
    due,
    ...(eventsFile ? { events: await eventsFile } : {}),
    ...(obsolete.length ? { obsolete } : {}),
    ...(started ? { checkpointWritten: started.written } : {}),
  }
}

/**
 * On a store that appends, the committed batch's lines appended to events.jsonl (`snapshot` is
 * the one after it), before any other maintenance and whether or not the commit `maintain`s;
 * synced at once when a manifest is expected. Nothing on other stores.
 */
export async function appendAfterCommit(
  ctx: MaintenanceContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  known: KnownBatch,
  maintain: boolean,
): Promise<EventsFile | undefined> {
  const appending = appendingStore(ctx.objects)
  if (!appending) return undefined
  const reset = Boolean(known.batch.history?.reset)
  const force = snapshot.status === 'completed'
  const durable = maintain && manifestExpected(snapshot, reset, force, ctx.checkpointEvery)
  return appendCommitted({ ...ctx, objects: appending }, keys, snapshot, known, durable)
}

/**
 * Whether a commit that leaves `snapshot` will write the manifest (see `manifestDue`), as far as
 * it can be told before the commit's lines are appended: then the append is synced at once, so
 * the manifest's `events_bytes` need no sync of their own. A wrong guess costs only that: a
 * manifest due otherwise syncs the file first (`prepareManifest`), and an append synced for
 * nothing costs one fsync.
 */
export function manifestExpected(
  snapshot: SessionSnapshot,
  historyReset: boolean,
  force: boolean,
  checkpointEvery: number,
): boolean {
  const stored = snapshot.manifest?.value
  return (
    force ||
    historyReset ||
    stored === undefined ||
    stored.status !== snapshot.status ||
    snapshot.batchesSinceCheckpoint >= checkpointEvery ||
    snapshot.lastBatch - stored.last_batch >= checkpointEvery
  )
}

/** Whether a commit that leaves `snapshot` writes a checkpoint (every N batches, or a reset). */
export function checkpointDue(ctx: MaintenanceContext, snapshot: SessionSnapshot, reset: boolean) {
  return snapshot.batchesSinceCheckpoint >= ctx.checkpointEvery || reset
}

/** A checkpoint and the bytes it is stored as. */
export interface PreparedCheckpoint {
  checkpoint: Checkpoint
  bytes: Uint8Array
}

/** The checkpoint of `snapshot`, serialised (checked on the way). */
export function checkpointBytes(ctx: MaintenanceContext, snapshot: SessionSnapshot) {
  const checkpoint = checkpointOf(snapshot, ctx.historyBatches ?? CHECKPOINT_HISTORY_BATCHES)
  return { checkpoint, bytes: toBytes(serializeCheckpoint(checkpoint)) }
}

/**
 * Writes the snapshot's checkpoint (`prepared`: serialised already); the checkpoint. One already
 * there (another writer's, of the same batch) stands: a reader resolves whichever of the two
 * forms it finds.
 */
export async function writeCheckpoint(
  ctx: MaintenanceContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  prepared: PreparedCheckpoint = checkpointBytes(ctx, snapshot),
  onNamed?: () => void,
): Promise<Checkpoint> {
  const { checkpoint, bytes } = prepared
  try {
    await ctx.objects.put(keys.checkpoint(snapshot.lastBatch), bytes, {
      ifNoneMatch: '*',
      contentType: 'application/json',
      ...(onNamed ? { onNamed } : {}),
    })
  } catch (error) {
    if (!isTurnlineError(error, 'conflict')) throw error
  }
  return checkpoint
}

/** Rolls the events up to the snapshot (event parts); the rollup state to record. */
async function rollUp(
  ctx: MaintenanceContext,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  before: RollupState,
): Promise<{ state: RollupState; obsolete: string[] }> {
  const known = ctx.cache.batches(keys.root)
  const copy = ctx.cache.rolled(keys.root)
  const done = await rollup(ctx.objects, keys, snapshot, before, ctx.maxRetained, known, copy)
  ctx.cache.rememberRolled(keys.root, done.copy)
  ctx.cache.forgetBatchesThrough(keys.root, done.state.rolledBatch)
  return done
}

/**
 * Writes the prepared manifest (compare-and-swap, never regressing) and returns the snapshot
 * with the manifest in force. A manifest that already names a later batch means another writer
 * committed meanwhile: the cached snapshot is dropped. Settles once the checkpoint it names is
 * written too (`checkpointWritten`: the manifest was prepared at the checkpoint's name, while
 * its folder was fsynced); a failure of either is thrown.
 */
export async function writeManifest(
  ctx: MaintenanceContext,
  keys: SessionKeys,
  prepared: PreparedManifest,
): Promise<SessionSnapshot> {
  const [manifest, checkpoint] = await Promise.allSettled([
    writeManifestOnly(ctx, keys, prepared),
    prepared.checkpointWritten,
  ])
  if (manifest.status === 'rejected') throw manifest.reason
  if (checkpoint.status === 'rejected') throw checkpoint.reason
  return manifest.value
}

async function writeManifestOnly(
  ctx: MaintenanceContext,
  keys: SessionKeys,
  prepared: PreparedManifest,
): Promise<SessionSnapshot> {
  const { snapshot, events } = prepared
  // The manifest vouches for the file's bytes (`events_bytes`): lines appended without a sync
  // are synced first.
  const appending = appendingStore(ctx.objects)
  if (appending && events) await syncEventsFile({ ...ctx, objects: appending }, keys, events)
  const manifest = await syncManifest(ctx.objects, keys, prepared.manifest, snapshot.manifest)
  if (manifest.value.last_batch > snapshot.lastBatch) ctx.cache.delete(keys.root)
  // Parts this manifest no longer lists go once it is in force; a reader that still follows an
  // older manifest finds one missing and reads the batches instead.
  if (manifest.value === prepared.manifest && prepared.obsolete) {
    await Promise.all(
      prepared.obsolete.map((key) => ctx.objects.delete(key).catch(() => undefined)),
    )
  }
  return { ...snapshot, manifest }
}

/**
 * The snapshot to keep while its manifest is being written: the manifest it will have, with the
 * etag of the one it replaces. A compare-and-swap from it either lands first (then the pending
 * write fails its own and keeps the newer manifest) or fails once and reads the stored one again;
 * either way the manifest never regresses, and the rollup state in it is already the one in
 * force (the rollup finished before the manifest write started).
 */
export function pendingManifestSnapshot(prepared: PreparedManifest): SessionSnapshot {
  const { snapshot, manifest } = prepared
  const etag = snapshot.manifest?.etag
  return etag === undefined ? snapshot : { ...snapshot, manifest: { value: manifest, etag } }
}
