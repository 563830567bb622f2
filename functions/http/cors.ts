import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from './app-context.ts'
import type { RouteMethods } from './route-methods.ts'

/**
 * Cross-origin requests (CORS), off unless the deployment lists origins
 * (TURNLINE_CORS_ORIGINS): the web apps that may call this API from a browser with the typed
 * client. A listed origin gets `Access-Control-Allow-Origin` (its own origin, never `*`, with
 * `Vary: Origin`) on every answer, errors included, and the headers a client reads exposed;
 * its preflights are answered before authentication (a browser sends them without the key).
 * No credentials mode: the API authenticates by bearer key, never by cookie.
 *
 * Every `OPTIONS` on a known path answers 204 with `Allow`, CORS or not; a path no route has
 * answers 404 as any other method would.
 */
export interface CorsOptions {
  /** Allowed origins, `scheme://host[:port]` lowercase; `*` allows every origin. */
  origins: readonly string[]
  methods: RouteMethods
}

/** What a browser page may send besides the CORS-safelisted headers. */
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'idempotency-key',
  'turnline-extensions',
  'last-event-id',
  'if-match',
  'traceparent',
  'tracestate',
]

/** What a browser page may read besides the CORS-safelisted response headers. */
export const CORS_EXPOSED_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
  'turnline-next-seq',
  'allow',
  'link',
  'location',
]

/** Preflight answers may be cached this long (seconds). */
const MAX_AGE = '600'

export function corsOriginAllowed(origins: readonly string[], origin: string | undefined): boolean {
  if (origin === undefined || origin === 'null') return false
  return origins.includes('*') || origins.includes(origin.toLowerCase())
}

export function cors(options: CorsOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const origin = c.req.header('origin')
    const allowed = corsOriginAllowed(options.origins, origin) ? origin : undefined
    if (c.req.method === 'OPTIONS') {
      const methods = options.methods(c.req.path)
      if (methods !== undefined) return optionsAnswer(methods, allowed, c.req.header.bind(c.req))
    }
    await next()
    if (options.origins.length === 0) return
    c.res = withHeaders(c.res, (headers) => {
      headers.append('vary', 'Origin')
      if (allowed === undefined) return
      headers.set('access-control-allow-origin', allowed)
      headers.set('access-control-expose-headers', CORS_EXPOSED_HEADERS.join(', '))
    })
  }
}

/** 204 with `Allow`; for an allowed origin's preflight, the CORS grant too. */
function optionsAnswer(
  methods: readonly string[],
  origin: string | undefined,
  header: (name: string) => string | undefined,
): Response {
  const headers = new Headers({ allow: methods.join(', '), vary: 'Origin' })
  if (origin !== undefined && header('access-control-request-method') !== undefined) {
    headers.set('access-control-allow-origin', origin)
    headers.set('access-control-allow-methods', methods.join(', '))
    headers.set('access-control-allow-headers', CORS_ALLOWED_HEADERS.join(', '))
    headers.set('access-control-max-age', MAX_AGE)
  }
  return new Response(null, { status: 204, headers })
}

/** Sets headers on an answer, copying it first when its headers are immutable (a fetched one). */
function withHeaders(response: Response, change: (headers: Headers) => void): Response {
  try {
    change(response.headers)
    return response
  } catch {
    const copy = new Response(response.body, response)
    change(copy.headers)
    return copy
  }
}
