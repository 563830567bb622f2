/** The timer half of a `TimerClock` (src/ports/clock.ts). */
interface Timers {
  setTimer(ms: number, fire: () => void): () => void
}

/** Resolves after `ms` on `clock`, or at once when `signal` aborts (the timer is cancelled). */
export function sleepOn(clock: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve()
    const done = () => {
      cancel()
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const cancel = clock.setTimer(ms, done)
    signal?.addEventListener('abort', done)
  })
}
