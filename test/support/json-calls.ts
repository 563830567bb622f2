import { expect, vi } from 'vitest'

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
   * Polls the work's status resource (`Location` of a 202) until `done` holds for it, and
   * answers it (waits for the event, no fixed sleep).
   */
  async function workWhere(
    location: string,
    done: (work: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown>> {
    let last = ''
    const seen = async () => {
      const answer = await call('GET', location)
      last = answer.text
      expect(answer.status, answer.text).toBe(200)
      return done(answer.json()) ? answer.json() : undefined
    }
    return vi
      .waitUntil(seen, { timeout: 60_000, interval: 50 })
      .catch((error: unknown) =>
        Promise.reject(new Error(`${location}: ${last}`, { cause: error })),
      )
  }

  /** The work's status once its state is one of `states`. */
  function workState(location: string, ...states: string[]): Promise<Record<string, unknown>> {
    return workWhere(location, (work) => states.includes(String(work.state)))
  }

  return { call, workState, workWhere }
}
