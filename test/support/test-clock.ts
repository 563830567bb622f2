import type { TimerClock } from '../../src/ports/clock.ts'

/** A clock, with timers, that moves only when the test says so. */
export interface TestClock extends TimerClock {
  /**
   * Moves time on by `ms`, firing every timer that comes due on the way, in order, each at its
   * own time; after each, the work it started runs as far as it can without a real timer or I/O
   * (a macrotask turn), so a timer it sets again is seen too.
   */
  advance(ms: number): Promise<void>
  /** Timers set and not yet fired or cancelled. */
  readonly pending: number
}

interface Timer {
  due: number
  order: number
  fire: () => void
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

export function testClock(start = Date.UTC(2026, 0, 1)): TestClock {
  let now = start
  let order = 0
  const timers = new Set<Timer>()
  const next = (until: number) =>
    [...timers].filter((t) => t.due <= until).sort((a, b) => a.due - b.due || a.order - b.order)[0]
  return {
    now: () => now,
    setTimer(ms, fire) {
      const timer = { due: now + Math.max(0, ms), order: order++, fire }
      timers.add(timer)
      return () => {
        timers.delete(timer)
      }
    },
    async advance(ms) {
      const until = now + ms
      await settle()
      for (let timer = next(until); timer; timer = next(until)) {
        timers.delete(timer)
        now = timer.due
        timer.fire()
        await settle()
      }
      now = until
    },
    get pending() {
      return timers.size
    },
  }
}
