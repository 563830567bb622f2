/** Time and randomness, injected so the core stays deterministic under test. */
export interface Clock {
  now(): number
}

export interface Ids {
  /** A random UUIDv4. */
  uuid(): string
  /** An opaque random token (≥128 bits), e.g. for lease fencing. */
  token(): string
}

export const systemClock: Clock = { now: () => Date.now() }

export const randomIds: Ids = {
  uuid: () => crypto.randomUUID(),
  token: () => {
    const bytes = crypto.getRandomValues(new Uint8Array(16))
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  },
}
