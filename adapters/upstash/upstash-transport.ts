/** One POST to Upstash's REST API: a command or a pipeline of them, as JSON. */
export interface UpstashHttpRequest {
  url: string
  /** The REST token, sent as `Authorization: Bearer <token>`. */
  token: string
  /** The JSON body. */
  body: string
  /** The last `upstash-sync-token` the database gave this client ('' before the first). */
  syncToken: string
  signal: AbortSignal
}

export interface UpstashHttpAnswer {
  status: number
  body: string
  /** The answer's `upstash-sync-token` header, when it has one. */
  syncToken?: string
}

/**
 * How the Upstash adapters send their HTTP requests. The default is the runtime's `fetch`; the
 * Node entries pass `nodeUpstashTransport` (node:http with kept-alive connections, a third of
 * fetch's CPU per request on Node: docs/performance.md). A request that cannot be sent or whose
 * answer is lost rejects; an answer of any status resolves.
 */
export type UpstashTransport = (request: UpstashHttpRequest) => Promise<UpstashHttpAnswer>

/** The HTTP headers of a request to Upstash's REST API. */
export function upstashHeaders(request: UpstashHttpRequest): Record<string, string> {
  return {
    authorization: `Bearer ${request.token}`,
    'content-type': 'application/json',
    ...(request.syncToken === '' ? {} : { 'upstash-sync-token': request.syncToken }),
  }
}

/** The transport over the runtime's `fetch` (every runtime has it). */
export const fetchUpstashTransport: UpstashTransport = async (request) => {
  const response = await fetch(request.url, {
    method: 'POST',
    headers: upstashHeaders(request),
    body: request.body,
    signal: request.signal,
  })
  const syncToken = response.headers.get('upstash-sync-token')
  return {
    status: response.status,
    body: await response.text(),
    ...(syncToken === null ? {} : { syncToken }),
  }
}
