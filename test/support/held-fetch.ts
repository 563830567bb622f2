import { requestLine } from './crashing-fetch.ts'

/**
 * The fetch of a process that stalls at one request: the first request `holdsAt` picks waits,
 * unsent, until `release` is called (`reached` resolves once it waits), so a test can put
 * another process's work between two of this one's writes. Every other call goes out at once.
 */
export function heldFetch(holdsAt: (method: string, path: string) => boolean): {
  fetch: typeof fetch
  reached: Promise<void>
  release: () => void
} {
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let arrive = () => {}
  const reached = new Promise<void>((resolve) => {
    arrive = resolve
  })
  let held = false
  const holding: typeof fetch = async (input, init) => {
    const { method, path } = requestLine(input, init)
    if (!held && holdsAt(method, path)) {
      held = true
      arrive()
      await released
    }
    return fetch(input, init)
  }
  return { fetch: holding, reached, release }
}
