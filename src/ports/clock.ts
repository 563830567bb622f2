/** Time and randomness, injected so the core stays deterministic under test. */
export interface Clock {
  now(): number
}

/**
 * A clock that can also wait: every timer of the engine and of the network adapters' deadlines
 * goes through it (lease renewal, an attempt's timeout, the pause between attempts), so a test
 * clock decides when they fire.
 */
export interface TimerClock extends Clock {
  /** Calls `fire` once, `ms` from now; the function returned cancels it (no effect once fired). */
  setTimer(ms: number, fire: () => void): () => void
}

export interface Ids {
  /** A random UUIDv4. */
  uuid(): string
  /** An opaque random token (≥128 bits), e.g. for lease fencing. */
  token(): string
}

export const systemClock: TimerClock = {
  now: () => Date.now(),
  setTimer(ms, fire) {
    const timer = setTimeout(fire, ms)
    return () => clearTimeout(timer)
  },
}

/** Resolves after `ms` on `clock`, or at once when `signal` aborts (the timer is cancelled). */
export function sleepOn(clock: TimerClock, ms: number, signal?: AbortSignal): Promise<void> {
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

export const randomIds: Ids = {
  uuid: () => crypto.randomUUID(),
  token: () => {
    const bytes = crypto.getRandomValues(new Uint8Array(16))
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  },
}
