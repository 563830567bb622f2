/**
 * Work commits left running after their batch was written, at most one per session (by its root
 * key): the append to events.jsonl of a commit before tools (`SessionStore.commit`'s
 * `deferAppend`), or all of a turn's end's maintenance in a process that keeps running after its
 * answer (`deferMaintenance`). The session's next commit in this process waits for it before
 * writing its own batch, so the store sees the same writes in the same order as when each commit
 * waits for its own.
 */
export class DeferredAppends {
  private readonly pending = new Map<string, Promise<unknown>>()

  /** Leaves `work` running for the session at `root`; it settles with its error, if any. */
  defer(root: string, work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      (error: unknown) => error,
    )
    this.pending.set(root, settled)
    // Work that succeeded has nothing to report: dropped once done (unless replaced meanwhile),
    // so sessions this process never commits to again are not kept. A failure stays for the
    // session's next commit to report.
    void settled.then((error) => {
      if (error === undefined && this.pending.get(root) === settled) this.pending.delete(root)
    })
  }

  /** Waits for the session's deferred work, if any (it stays to be settled). */
  async idle(root: string): Promise<void> {
    await this.pending.get(root)
  }

  /** Waits for the session's deferred work, if any, and drops it; its error when it failed. */
  async settle(root: string): Promise<unknown> {
    const work = this.pending.get(root)
    if (work === undefined) return undefined
    this.pending.delete(root)
    return await work
  }

  /** Waits for every session's deferred work (a process about to exit). */
  async drain(): Promise<void> {
    await Promise.all(this.pending.values())
  }
}
