import { expect, vi } from 'vitest'
import { type JsonAnswer as AnyJsonAnswer, jsonCaller } from './json-call.ts'

/** One answer of the server: status, headers, the body as text and parsed (an object). */
export interface JsonAnswer extends Omit<AnyJsonAnswer, 'json'> {
  json: () => Record<string, unknown>
}

/**
 * Requests with JSON bodies to the server at `base()` (read at each call: a server started in
 * `beforeAll`), with `headers` on every one (an API key), and a wait on a background run's
 * status resource.
 */
export function jsonCalls(base: () => string, headers: Record<string, string> = {}) {
  const request = jsonCaller(headers)
  const call = (
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<JsonAnswer> => request(base(), method, path, body, extra)

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
