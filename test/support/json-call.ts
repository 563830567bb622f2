/** An answer read whole: status, headers, text, and the text as JSON on demand. */
export interface JsonAnswer {
  status: number
  headers: Headers
  text: string
  /** The body parsed (JSON.parse's own type: tests read answers of every shape). */
  json: () => ReturnType<typeof JSON.parse>
}

/**
 * A JSON request to a server under test with the given headers on every call (a bearer key):
 * `call(url, method, path, body?, headers?)`.
 */
export function jsonCaller(base: Record<string, string>) {
  return async (
    url: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<JsonAnswer> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...base, ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: () => JSON.parse(text),
    }
  }
}
