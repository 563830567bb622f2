/** Real randomness for the `Ids` port (src/ports/clock.ts): UUIDv4s and 128-bit tokens. */
export const randomIds = {
  uuid: (): string => crypto.randomUUID(),
  token: (): string => {
    const bytes = crypto.getRandomValues(new Uint8Array(16))
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  },
}
