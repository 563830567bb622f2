import type { MiddlewareHandler } from 'hono'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { AppEnv } from './app-context.ts'
import { corsOriginAllowed } from './cors.ts'
import { type ErrorLog, errorResponse } from './http-errors.ts'

/**
 * The Host and Origin check of an unauthenticated (single-tenant) server. Listening on loopback
 * keeps the network out, but not a web page the developer opens: by DNS rebinding the page's own
 * name comes to resolve to 127.0.0.1, and its scripts then call the server as a same-origin
 * site; a plain cross-site form or `fetch` reaches it too. Either way the browser says where the
 * request comes from, so the server answers 403 `forbidden` unless
 *
 * - `Host` (or, without one, the request URL's host) names this machine: `localhost`,
 *   `127.x.x.x` or `[::1]`, any port, or a name the operator listed (TURNLINE_ALLOWED_HOSTS;
 *   `name` for any port, `name:port` for one), and
 * - `Origin`, when the request has one, is a page of such a host (any port and scheme: the same
 *   site), or an origin the operator listed for CORS (TURNLINE_CORS_ORIGINS, exactly; `*` is
 *   refused without keys). `Origin: null` (sandboxed frames, files) is refused; no other site
 *   is ever allowed, and a listed origin does not open the Host check: its requests must still
 *   be addressed to this machine.
 *
 * The viewer at `/ui` sends its own origin, and the CLI and scripts send none. The two routes
 * that authenticate by signature instead of a key (the runner's exit callback, automation
 * webhooks) are not checked: an unsigned request gets nothing from them, and a webhook may come
 * through a tunnel under a public name without opening the rest of the API to that name.
 */
export interface HostGuardOptions {
  /** Extra names (TURNLINE_ALLOWED_HOSTS): `name` (any port) or `name:port`, lowercase. */
  allowedHosts: readonly string[]
  /** Origins listed for CORS (TURNLINE_CORS_ORIGINS), lowercase `scheme://host[:port]`. */
  corsOrigins?: readonly string[]
}

const LOOPBACK_NAME = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/
/** `name[:port]` or `[v6][:port]`; anything else is no host this server has. */
const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/
/** The signed routes: they authenticate each request themselves. */
const SIGNED = /^\/v1\/(runner\/callback|webhooks\/[^/]+)$/

export function hostGuard(options: HostGuardOptions, log: ErrorLog): MiddlewareHandler<AppEnv> {
  const extra = new Set(options.allowedHosts)
  // `*` would let every site drive a server that has no keys: only listed origins count here.
  const corsOrigins = (options.corsOrigins ?? []).filter((origin) => origin !== '*')
  const allowed = (host: string): boolean => {
    const match = HOST.exec(host)
    const name = match?.[1]
    if (name === undefined) return false
    return LOOPBACK_NAME.test(name) || extra.has(name) || extra.has(host)
  }
  return async (c, next) => {
    if (c.req.method === 'POST' && SIGNED.test(c.req.path)) return next()
    const host = (c.req.header('host') ?? new URL(c.req.url).host).toLowerCase()
    if (!allowed(host)) {
      return errorResponse(refusal(`Host ${shown(host)} is not a name of this server`), log)
    }
    const origin = c.req.header('origin')
    if (
      origin !== undefined &&
      !allowed(originHost(origin)) &&
      !corsOriginAllowed(corsOrigins, origin)
    ) {
      return errorResponse(refusal(`requests from ${shown(origin)} are not allowed`), log)
    }
    return next()
  }
}

/** The host of an `Origin` value; '' (never allowed) for `null` and anything not http(s). */
function originHost(origin: string): string {
  try {
    const url = new URL(origin)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.host : ''
  } catch {
    return ''
  }
}

function refusal(why: string): TurnlineError {
  return new TurnlineError(
    'forbidden',
    `${why}: without API keys the server answers only requests addressed to this machine ` +
      '(localhost, 127.0.0.1, [::1]; more names in TURNLINE_ALLOWED_HOSTS) and not sent by ' +
      'pages of other sites',
  )
}

/** A header value as it may appear in a message: printable and short. */
function shown(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?')
  return JSON.stringify(printable.length > 100 ? `${printable.slice(0, 100)}…` : printable)
}
