import type { ExecSession } from './exec-session.ts'

/**
 * Finished commands whose spool descriptor stays open (newest first); beyond these the oldest
 * release theirs and later reads reopen the spool, checking it is the same file.
 */
const MAX_HELD_SPOOLS = 256
/** A finished command is kept in memory this long (its record answers for it after). */
const FORGET_AFTER_MS = 15 * 60_000

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

  /**
   * A finished command leaves memory after a while (`forget`: the registry lets go of it). One
   * whose output a process it left still holds stays until that ends (the sweep asks).
   */
  forgetLater(session: ExecSession, forget: () => void): void {
    setTimeout(() => {
      if (!session.drained) return this.forgetLater(session, forget)
      forget()
      this.drop(session)
      session.forget()
    }, FORGET_AFTER_MS).unref()
  }

  /** No longer held here (forgotten: its descriptor closes once drained). */
  drop(session: ExecSession): void {
    this.#holding.delete(session)
  }
}
