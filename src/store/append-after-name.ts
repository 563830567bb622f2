import type { CommittedBatch } from './commit-batch.ts'
import type { EventsFile } from './events-file-state.ts'
import { appendAfterCommit, type MaintenanceContext } from './session-maintenance.ts'
import type { SessionKeys } from './session-ref.ts'

/**
 * The append of a commit's lines to events.jsonl (appendAfterCommit), started as soon as the
 * batch has its name (`commitBatch`'s `onNamed`: on the fs store, while the folder is fsynced)
 * or, on a store that does not tell, once the commit returns. The lines are of a batch that can
 * be read already; should the batch's name not survive a power loss, the next writer that reads
 * the file cuts off lines of a batch that never became durable (events-file-recovery.ts).
 */
export class AppendAfterName {
  private started: Promise<EventsFile | undefined> | undefined

  constructor(
    private readonly upkeep: MaintenanceContext,
    private readonly keys: SessionKeys,
    /** Whether the commit maintains (then the append is synced when a manifest is expected). */
    private readonly maintain: boolean,
  ) {}

  /** Starts the append once; the same promise on every later call. */
  start = (committed: CommittedBatch): Promise<EventsFile | undefined> => {
    if (this.started === undefined) {
      const known = { batch: committed.batch, lines: committed.lines }
      const maintain = this.maintain || committed.snapshot.status === 'completed'
      this.started = appendAfterCommit(this.upkeep, this.keys, committed.snapshot, known, maintain)
      this.started.catch(() => undefined)
    }
    return this.started
  }

  /**
   * The commit failed: waits for an append started at the name to settle; whether one was (the
   * file may then hold lines of a batch not made durable: the caller forgets what it knew).
   */
  async settled(): Promise<boolean> {
    if (this.started === undefined) return false
    await this.started.catch(() => undefined)
    return true
  }
}
