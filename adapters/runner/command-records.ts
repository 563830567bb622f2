import type { ExecSession } from './exec-session.ts'

/**
 * The records (exec-record.ts) of this runner's commands being written once they settled, by
 * `<tenant>/<session>/<id>`. A command settles at its exit when a process it left still holds
 * its output (exec-session.ts); its record, written then with `spool_complete: false` and the
 * output so far, is written again once that process lets go, with the whole output. Until then
 * the sweep leaves its spool (`rewriting`), and an erase waits for both writes (`under`).
 */
export class CommandRecords {
  readonly #saving = new Map<string, Promise<void>>()

  /** `session` settled: `save` writes its record now (then `saved`), and again once drained. */
  settled(key: string, session: ExecSession, save: () => Promise<void>, saved: () => void): void {
    const first = save()
    this.#keep(key, first)
    void first.finally(saved)
    // A failed second write leaves the first, which says the output was not complete: a read
    // then takes the spool's size (exec-state-folder.ts).
    const again = () => first.then(save).catch(() => {})
    if (!session.drained) session.onDrained(() => this.#keep(`${key}/drained`, again()))
  }

  /** Whether the command's record is still to be written (it settled before it drained). */
  rewriting(key: string): boolean {
    return this.#saving.has(`${key}/drained`)
  }

  /** The writes under way of the commands whose keys start with `prefix`. */
  under(prefix: string): Promise<void>[] {
    return [...this.#saving].filter(([key]) => key.startsWith(prefix)).map(([, saving]) => saving)
  }

  #keep(key: string, saving: Promise<void>): void {
    this.#saving.set(key, saving)
    const done = () => this.#saving.get(key) === saving && this.#saving.delete(key)
    saving.then(done, done)
  }
}
