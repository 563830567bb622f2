/**
 * Time and randomness, injected so the core stays deterministic under test. The real ones are
 * in src/shared: `systemClock` (system-clock.ts), `randomIds` (random-ids.ts); `sleepOn`
 * (sleep-on.ts) waits on any of them.
 */
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
