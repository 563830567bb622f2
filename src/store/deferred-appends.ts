/**
 * Appends to events.jsonl that commits left running (`SessionStore.commit`'s `deferAppend`), at
 * most one per session (by its root key): the session's next commit in this process waits for
 * it before writing its own batch, so the store sees the same writes in the same order as when
 * each commit waits for its own append.
 */
export class DeferredAppends {
  private readonly pending = new Map<string, Promise<unknown>>()

  /** Leaves `append` running for the session at `root`; it settles with its error, if any. */
  defer(root: string, append: Promise<unknown>): void {
    this.pending.set(
      root,
      append.then(
        () => undefined,
        (error: unknown) => error,
      ),
    )
  }

  /** Waits for the session's deferred append, if any (it stays to be settled). */
  async idle(root: string): Promise<void> {
    await this.pending.get(root)
  }

  /** Waits for the session's deferred append, if any, and drops it; its error when it failed. */
  async settle(root: string): Promise<unknown> {
    const append = this.pending.get(root)
    if (append === undefined) return undefined
    this.pending.delete(root)
    return await append
  }
}
