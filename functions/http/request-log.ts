import type { MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import { METHOD_NAME_ALL } from 'hono/router'
import type { AppEnv } from './app-context.ts'
import { streamedBody, whenBodyEnds } from './body-end.ts'

/** Where structured operator log entries go: one JSON object per call. */
export type LogSink = (entry: Record<string, unknown>) => void

/** The default sink of the runtime entries: one JSON line on stdout. */
export const jsonLines: LogSink = (entry) => console.log(JSON.stringify(entry))

const SESSION_PATH = /^\/v1\/sessions\/([^/]+)/

/**
 * One structured line per request: `{ts, level, msg: "request", method, route, path, status,
 * duration_ms, tenant?, session?}`. `route` is the matched route pattern (`/v1/sessions/:id/turns`;
 * null when none matched). A streamed answer (SSE, NDJSON) is logged when its body ends, so its
 * duration covers the whole turn; `aborted: true` when the client went away first.
 */
export function requestLogger(log: LogSink): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = Date.now()
    await next()
    const path = new URL(c.req.url).pathname
    const session = SESSION_PATH.exec(path)?.[1]
    const route = matchedRoute(c)
    const base = {
      method: c.req.method,
      route,
      path: path.length > 200 ? `${path.slice(0, 200)}…` : path,
      status: c.res.status,
    }
    const emit = (extra: Record<string, unknown> = {}) => {
      const tenant = c.get('tenant')
      log({
        ts: new Date().toISOString(),
        level: c.res.status >= 500 ? 'error' : 'info',
        msg: 'request',
        ...base,
        duration_ms: Date.now() - started,
        ...(tenant === undefined ? {} : { tenant }),
        ...(session === undefined ? {} : { session: decodeSafely(session) }),
        ...extra,
      })
    }
    const body = streamedBody(c.res)
    if (body) {
      c.res = new Response(whenBodyEnds(body, emit), c.res)
    } else {
      emit()
    }
  }
}

/** The pattern of the route that answered (middleware aside), or null when none matched. */
export function matchedRoute(c: Parameters<MiddlewareHandler<AppEnv>>[0]): string | null {
  const routes = matchedRoutes(c).filter((route) => route.method !== METHOD_NAME_ALL)
  return routes.at(-1)?.path ?? null
}

function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment).slice(0, 200)
  } catch {
    return segment.slice(0, 200)
  }
}
