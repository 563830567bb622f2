/**
 * Runs `work` calls one after another, each once the previous one settled (whatever it gave):
 * what one of them holds at once (a git reading: up to its bound on bytes) is never held twice.
 */
export class OneAtATime {
  #last: Promise<unknown> = Promise.resolve()

  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#last.then(work, work)
    this.#last = next.catch(() => undefined)
    return next
  }
}
