/**
 * `fetch` on Node's sockets for the outgoing calls of a Node process (the model's streamed
 * requests, HTTP tools and hooks on hosts the operator names, the runner, callbacks, telemetry,
 * the S3 and Upstash clients): Node's global fetch runs the WHATWG fetch algorithm in JavaScript
 * on undici — a Request, a Response, header guards, a body stream for the request and one for
 * the response — which costs ≈ 0.2 ms of CPU more per request, and Node's HTTP client (its
 * agent, request and message streams) ≈ 0.05 ms more than the HTTP/1.1 exchange itself
 * (http1-connections.ts); a steady turn makes three (docs/performance.md).
 *
 * It answers a `Response` (node-response.ts: its status, headers and body reads its own, every
 * other member a platform Response's made on first use) whose body is the socket's chunks
 * (node-response-body.ts), rejects as
 * fetch does (`signal.reason` on an abort, `TypeError('fetch failed', { cause })` on a transport
 * failure or an answer that breaks HTTP/1.1; an abort or a broken connection after the headers
 * errors the body) and follows
 * redirects as fetch does for `redirect: 'follow'` (the default), `'manual'` (the 3xx answered
 * as it came) and `'error'`. Requests it does not take on — a `Request` object, a body that is a
 * stream, a Blob or a FormData, a scheme other than http(s), a URL with credentials — go to
 * `fallback` (the global fetch), so every caller keeps fetch's behaviour. It does not ask for
 * compressed answers; an answer compressed anyway is decompressed, as fetch would.
 *
 * Connections are kept alive per origin (a free socket closes after 4 s idle, under the 5 s
 * that servers such as Node's keep one by default); a connection with no data for 300 s fails
 * the request, as undici's header and body timeouts do.
 */
import { Http1Connections } from './http1-connections.ts'
import { type Hop, nextRedirect } from './node-fetch-redirect.ts'
import { NodeResponse } from './node-response.ts'

const MAX_REDIRECTS = 20

export function nodeFetch(fallback: typeof fetch = (input, init) => fetch(input, init)) {
  const connections = new Http1Connections()
  const fetchOnNode = async (input: string | URL | Request, init?: RequestInit) => {
    const hop = typeof input === 'string' || input instanceof URL ? hopOf(input, init) : undefined
    if (hop === undefined) return fallback(input, init)
    const signal = init?.signal ?? undefined
    signal?.throwIfAborted()
    const mode = init?.redirect ?? 'follow'
    let current = hop
    for (let redirects = 0; ; redirects++) {
      const { head, body } = await connections.send(current, signal)
      const response = new NodeResponse(body, head) as unknown as Response
      if (mode === 'manual') return response
      let next: Hop | undefined
      try {
        next = nextRedirect(current, head.status, head.header('location'))
      } catch (error) {
        void body?.cancel()
        throw error
      }
      if (next === undefined) return response
      // A redirect's own body is not read: cancelling it ends its connection and its listeners.
      void body?.cancel()
      if (mode === 'error' || redirects >= MAX_REDIRECTS) {
        throw new TypeError('fetch failed', {
          cause: new Error(mode === 'error' ? 'unexpected redirect' : 'redirect count exceeded'),
        })
      }
      current = next
    }
  }
  return fetchOnNode as typeof fetch
}

/** The request as one hop, or undefined when it is for the fallback. */
function hopOf(input: string | URL, init: RequestInit | undefined): Hop | undefined {
  let url: URL
  try {
    url = new URL(input)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username !== '' || url.password !== '') return undefined
  const body = bodyOf(init?.body)
  if (body === false) return undefined
  const method = methodOf(init?.method)
  if (body && (method === 'GET' || method === 'HEAD')) return undefined
  const headers = headersOf(init?.headers)
  if (body) {
    headers['content-length'] = String(body.length)
    if (body.type && headers['content-type'] === undefined) headers['content-type'] = body.type
  } else if (method !== 'GET' && method !== 'HEAD') {
    headers['content-length'] = '0'
  }
  headers.accept ??= '*/*'
  headers['user-agent'] ??= 'node'
  return { url, method, headers, body: body ? body.bytes : undefined }
}

/**
 * The body (a string is written as UTF-8 straight into the request's buffer), its length in
 * bytes and its default type; false when it is a kind this fetch leaves to the fallback.
 */
function bodyOf(
  body: RequestInit['body'],
): { bytes: Buffer | string; length: number; type?: string } | undefined | false {
  if (body === undefined || body === null) return undefined
  if (typeof body === 'string') {
    return { bytes: body, length: Buffer.byteLength(body), type: 'text/plain;charset=UTF-8' }
  }
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) {
    const bytes =
      body instanceof Uint8Array
        ? Buffer.from(body.buffer, body.byteOffset, body.byteLength)
        : Buffer.from(body)
    return { bytes, length: bytes.byteLength }
  }
  if (body instanceof URLSearchParams) {
    const text = body.toString()
    return {
      bytes: text,
      length: Buffer.byteLength(text),
      type: 'application/x-www-form-urlencoded;charset=UTF-8',
    }
  }
  return false
}

const STANDARD_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH'])

function methodOf(method: string | undefined): string {
  if (method === undefined) return 'GET'
  const upper = method.toUpperCase()
  return STANDARD_METHODS.has(upper) ? upper : method
}

function headersOf(headers: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (headers === undefined) return out
  const entries =
    headers instanceof Headers || Array.isArray(headers)
      ? new Headers(headers).entries()
      : Object.entries(headers)
  for (const [name, value] of entries) {
    const key = name.toLowerCase()
    out[key] = out[key] === undefined ? String(value) : `${out[key]}, ${value}`
  }
  return out
}
