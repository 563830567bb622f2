import { SimulatedCrash } from './crashing-object-store.ts'

/**
 * The fetch of a process that dies at one request, as crashingObjectStore's writer does at one
 * write, but on the wire: every call the process makes (S3, Upstash, the model) goes through it.
 * At the first request `crashesAt` picks, `before` fails it unsent (nothing stored), `after`
 * sends it and fails once its answer came (stored, never seen). Every later call fails too, as
 * for a dead process.
 */
export function crashingFetch(
  crashesAt: (method: string, path: string) => boolean,
  mode: 'before' | 'after',
): { fetch: typeof fetch; crashed: () => boolean } {
  let dead = false
  const dying: typeof fetch = async (input, init) => {
    if (dead) throw new SimulatedCrash('the process is dead')
    const { method, path } = requestLine(input, init)
    const hit = crashesAt(method, path)
    if (hit && mode === 'before') {
      dead = true
      throw new SimulatedCrash(`crash before ${method} ${path}`)
    }
    const answer = await fetch(input, init)
    if (hit) {
      dead = true
      await answer.arrayBuffer()
      throw new SimulatedCrash(`crash after ${method} ${path}`)
    }
    return answer
  }
  return { fetch: dying, crashed: () => dead }
}

/** The method and the decoded path of a call to fetch. */
export function requestLine(
  input: Parameters<typeof fetch>[0],
  init: Parameters<typeof fetch>[1],
): { method: string; path: string } {
  const request = input instanceof Request ? input : undefined
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase()
  const url = new URL(request ? request.url : String(input))
  return { method, path: decodeURIComponent(url.pathname) }
}
