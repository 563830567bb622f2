/**
 * The real clock: `Date.now` and `setTimeout`. It is a `TimerClock` (src/ports/clock.ts) by its
 * shape; src/shared imports nothing.
 */
export const systemClock = {
  now: () => Date.now(),
  setTimer(ms: number, fire: () => void): () => void {
    const timer = setTimeout(fire, ms)
    return () => clearTimeout(timer)
  },
}
