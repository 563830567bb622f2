/**
 * Waits for an event instead of a fixed time: polls `probe` every 50 ms until it answers
 * something other than undefined, and answers that; fails naming `what` after `timeoutMs`.
 * `probe` may be async (it may call a server).
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = await probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
