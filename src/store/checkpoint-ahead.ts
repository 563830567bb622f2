import type { Checkpoint } from '../contract/checkpoint.ts'
import type { CommittedBatch } from './commit-batch.ts'
import {
  type CheckpointWrite,
  checkpointBytes,
  checkpointDue,
  type MaintenanceContext,
  type PreparedCheckpoint,
  writeCheckpoint,
} from './session-maintenance.ts'
import type { SessionKeys } from './session-ref.ts'

/**
 * The checkpoint of a commit that is due one (every N batches, a history reset), for
 * `prepareManifest`. It is serialised as soon as the batch has its name (`commitBatch`'s
 * `onNamed`: on the fs store, while the batch's folder is fsynced) and written once the commit
 * returns: after the commit point, as always, and beside the append of the batch's lines to
 * events.jsonl, which it does not depend on (the manifest that names it waits for both).
 */
export class CheckpointAhead {
  private prepared: { committed: CommittedBatch; ready: PreparedCheckpoint | Error } | undefined

  constructor(
    private readonly upkeep: MaintenanceContext,
    private readonly keys: SessionKeys,
    /** Whether the commit maintains (a completed session's commit always does). */
    private readonly maintain: boolean,
  ) {}

  /** `first`, then `prepare`: for `onNamed`, after the append it starts. */
  after(first: (committed: CommittedBatch) => unknown): (committed: CommittedBatch) => void {
    return (committed) => {
      first(committed)
      this.prepare(committed)
    }
  }

  /** Serialises the checkpoint of `committed` when its commit will write one. */
  prepare = (committed: CommittedBatch): void => {
    if (this.due(committed)) this.prepared = { committed, ready: this.serialise(committed) }
  }

  /**
   * Writes the checkpoint of the commit point `committed`; undefined when none is due. `named`
   * settles once it can be read under its key: the manifest that names it is prepared and
   * written meanwhile, and settles only once the checkpoint is `written` (its name durable).
   */
  start(committed: CommittedBatch): CheckpointWrite | undefined {
    if (!this.due(committed)) return undefined
    const ready =
      this.prepared?.committed === committed ? this.prepared.ready : this.serialise(committed)
    if (ready instanceof Error) {
      const failed = Promise.reject(ready)
      failed.catch(() => undefined)
      return { named: failed, written: failed }
    }
    let onNamed: (() => void) | undefined
    const named = new Promise<Checkpoint>((resolve) => {
      onNamed = () => resolve(ready.checkpoint)
    })
    const written = writeCheckpoint(this.upkeep, this.keys, committed.snapshot, ready, onNamed)
    const first = Promise.race([named, written])
    for (const settling of [written, first]) settling.catch(() => undefined)
    return { named: first, written }
  }

  private serialise(committed: CommittedBatch): PreparedCheckpoint | Error {
    try {
      return checkpointBytes(this.upkeep, committed.snapshot)
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error))
    }
  }

  private due(committed: CommittedBatch): boolean {
    const maintain = this.maintain || committed.snapshot.status === 'completed'
    const reset = Boolean(committed.batch.history?.reset)
    return maintain && checkpointDue(this.upkeep, committed.snapshot, reset)
  }
}
