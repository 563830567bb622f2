import type { EventsFile } from './events-file-state.ts'
import {
  type MaintenanceContext,
  pendingManifestSnapshot,
  prepareManifest,
  writeManifest,
} from './session-maintenance.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'

/** What a commit's maintenance left: the snapshot to keep, and what failed or still runs. */
export interface Upkept {
  snapshot: SessionSnapshot
  /** A failure after the commit point (checkpoint, rollup, manifest, or a deferred append or
   * maintenance settled first): the commit stands, the next writer or reader repairs it. */
  maintenanceError?: unknown
  /** With `overlapManifest`: settles when the manifest write is done, with its error if any
   * (never rejects). The commit stands either way. */
  manifestWritten?: Promise<unknown>
  /** With `deferMaintenance`: settles when the maintenance left running after the commit
   * returned is done, with its failure if any (never rejects; nothing waits for it). */
  maintenanceLeftRunning?: Promise<unknown>
  /** Nothing was due after the commit: no checkpoint, rollup or manifest written. */
  nothingDue?: true
}

/** How the commit's maintenance runs (see `SessionStore.commit`). */
export interface UpkeepOptions {
  /** Checkpoint, rollup, manifest; otherwise only the append to events.jsonl is waited for. */
  maintain: boolean
  historyReset: boolean
  /** The session's end: the manifest is written whatever else (never overlapped). */
  force: boolean
  /** Leave the manifest write running (`manifestWritten`) instead of waiting for it. */
  overlapManifest: boolean
  /** The cache holds `committed` already: the result replaces it only if nothing else did. */
  replacing?: boolean
}

/**
 * Everything after a commit's batch (its commit point): the append of its lines to events.jsonl
 * (`appended`, started at the batch's name), then, when the commit maintains, the checkpoint,
 * rollup and manifest (session-maintenance.ts). Keeps the resulting snapshot in the cache
 * (with `overlapManifest`, the pending one until the manifest is written). Never rejects: a
 * failure is the result's `maintenanceError`.
 */
export async function upkeepAfterCommit(
  ctx: MaintenanceContext,
  keys: SessionKeys,
  committed: SessionSnapshot,
  appended: Promise<EventsFile | undefined>,
  options: UpkeepOptions,
): Promise<Upkept> {
  let maintenanceError: unknown
  let next = committed
  let file: EventsFile | undefined
  try {
    file = await appended
  } catch (error) {
    maintenanceError = error
  }
  const failed = () => (maintenanceError !== undefined ? { maintenanceError } : {})
  let nothingDue = !options.maintain
  if (options.maintain) {
    const { historyReset, force } = options
    try {
      const prepared = await prepareManifest(ctx, keys, next, historyReset, force, file)
      if (!prepared.due) {
        next = prepared.snapshot
        nothingDue = true
      } else if (options.overlapManifest && !force) {
        const pending = pendingManifestSnapshot(prepared)
        ctx.cache.set(keys.root, pending)
        const manifestWritten = writeManifest(ctx, keys, prepared).then(
          (written) => void ctx.cache.replace(keys.root, pending, written),
          (error: unknown) => error,
        )
        return { snapshot: pending, manifestWritten, ...failed() }
      } else {
        next = await writeManifest(ctx, keys, prepared)
      }
    } catch (error) {
      maintenanceError ??= error
    }
  }
  if (options.replacing) ctx.cache.replace(keys.root, committed, next)
  else ctx.cache.set(keys.root, next)
  return { snapshot: next, ...failed(), ...(nothingDue ? { nothingDue: true as const } : {}) }
}
