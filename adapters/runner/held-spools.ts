import type { ExecSession } from './exec-session.ts'

/**
 * Finished commands whose spool descriptor stays open (newest first); beyond these the oldest
 * release theirs and later reads reopen the spool, checking it is the same file.
 */
const MAX_HELD_SPOOLS = 256

/** Finished (drained) commands still holding their spool's descriptor, oldest first. */
export class HeldSpools {
  readonly #holding = new Set<ExecSession>()

  /** Keeps at most MAX_HELD_SPOOLS finished commands' spool descriptors open. */
  hold(session: ExecSession): void {
    if (!session.drained) return
    this.#holding.add(session)
    for (const oldest of this.#holding) {
      if (this.#holding.size <= MAX_HELD_SPOOLS) break
      this.#holding.delete(oldest)
      oldest.spool.release()
    }
  }

  /** No longer held here (forgotten: its descriptor closes once drained). */
  drop(session: ExecSession): void {
    this.#holding.delete(session)
  }
}
