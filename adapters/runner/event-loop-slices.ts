import { setImmediate as nextTurn } from 'node:timers/promises'

/** The work has run on the thread (its slices together) longer than it may. */
export class RunTimeSpent extends Error {
  override readonly name = 'RunTimeSpent'
}

/**
 * Long synchronous work on the runner's one JavaScript thread cut into slices: `pause()` is cheap
 * to call between steps and lets every request and timer waiting on the event loop run once a
 * slice has taken `sliceMs`; work that ends within one slice never waits at all. Past `maxRunMs`
 * of its own slices (the waits between them not counted) it throws `RunTimeSpent`.
 */
export class EventLoopSlices {
  #started = performance.now()
  #ranMs = 0

  constructor(
    private readonly sliceMs: number,
    private readonly maxRunMs: number,
  ) {}

  /** Yields to the event loop when this slice has run its time; the next slice starts after. */
  async pause(): Promise<void> {
    const ran = performance.now() - this.#started
    if (ran < this.sliceMs) return
    this.#ranMs += ran
    if (this.#ranMs > this.maxRunMs) {
      throw new RunTimeSpent(`the work ran more than ${this.maxRunMs} ms`)
    }
    await nextTurn()
    this.#started = performance.now()
  }
}
