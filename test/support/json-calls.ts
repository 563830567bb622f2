import { expect } from 'vitest'

/** One answer of the server: status, headers, the body as text and parsed. */
export interface JsonAnswer {
  status: number
  headers: Headers
  text: string
  json: () => Record<string, unknown>
}

/**
 * Requests with JSON bodies to the server at `base()` (read at each call: a server started in
 * `beforeAll`), with `headers` on every one (an API key), and a wait on a background run's
 * status resource.
 */
export function jsonCalls(base: () => string, headers: Record<string, string> = {}) {
  async function call(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<JsonAnswer> {
    const response = await fetch(`${base()}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers, ...extra },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    const json = () => JSON.parse(text) as Record<string, unknown>
    return { status: response.status, headers: response.headers, text, json }
  }

  /**
   * Polls the work's status resource (`Location` of a 202) until its state is one of `states`,
   * and answers it (waits for the event, no fixed sleep).
   */
  async function workState(
    location: string,
    ...states: string[]
  ): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 30_000
    for (;;) {
      const answer = await call('GET', location)
      expect(answer.status, answer.text).toBe(200)
      if (states.includes(String(answer.json().state))) return answer.json()
      if (Date.now() > deadline) {
        throw new Error(`work never became ${states.join(' or ')}: ${answer.text}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  return { call, workState }
}
