/** The paced work ran (its slices together) longer than it may. */
export class RunTimeSpent extends Error {
  override readonly name = 'RunTimeSpent'
}

export interface PacerOptions {
  /** How long a slice of the work runs before the event loop gets a turn. */
  sliceMs: number
  /** The most its slices may run together (the waits between them not counted). */
  maxRunMs?: number
  /** How the event loop gets its turn: a macrotask (`setTimeout` 0) unless given. */
  nextTurn?: () => Promise<unknown>
}

/**
 * Long synchronous work on a thread every other request shares, cut into slices: `tick()` is
 * cheap to call between steps and, once a slice has run `sliceMs` (`performance.now`, the
 * monotonic Web clock), lets everything waiting on the event loop run; work that ends within
 * one slice never waits. Past `maxRunMs` of its own slices `tick()` throws `RunTimeSpent`.
 */
export class EventLoopPacer {
  #since = performance.now()
  #ranMs = 0

  constructor(private readonly options: PacerOptions) {}

  async tick(): Promise<void> {
    const ran = performance.now() - this.#since
    if (ran < this.options.sliceMs) return
    this.#ranMs += ran
    const { maxRunMs, nextTurn = macrotask } = this.options
    if (maxRunMs !== undefined && this.#ranMs > maxRunMs) {
      throw new RunTimeSpent(`the work ran more than ${maxRunMs} ms`)
    }
    await nextTurn()
    this.#since = performance.now()
  }
}

const macrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0))
