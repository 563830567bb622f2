import type { MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import { METHOD_NAME_ALL } from 'hono/router'
import type { AppEnv } from './app-context.ts'

/** Where structured operator log entries go: one JSON object per call. */
export type LogSink = (entry: Record<string, unknown>) => void

/** The default sink of the runtime entries: one JSON line on stdout. */
export const jsonLines: LogSink = (entry) => console.log(JSON.stringify(entry))

const SESSION_PATH = /^\/v1\/sessions\/([^/]+)/
const STREAMED = /^(text\/event-stream|application\/x-ndjson)/

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
    // The content type first: reading `body` of an answer built from a string turns it into a
    // stream (on Node the server then writes it chunk by chunk instead of in one piece).
    const body = STREAMED.test(c.res.headers.get('content-type') ?? '') ? c.res.body : null
    if (body) {
      c.res = new Response(whenDone(body, emit), c.res)
    } else {
      emit()
    }
  }
}

/** The pattern of the route that answered (middleware aside), or null when none matched. */
function matchedRoute(c: Parameters<MiddlewareHandler<AppEnv>>[0]): string | null {
  const routes = matchedRoutes(c).filter((route) => route.method !== METHOD_NAME_ALL)
  return routes.at(-1)?.path ?? null
}

/** Passes the stream through and calls `done` once when it ends, fails or is cancelled. */
function whenDone(
  source: ReadableStream<Uint8Array>,
  done: (extra?: Record<string, unknown>) => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  let ended = false
  const end = (extra?: Record<string, unknown>) => {
    if (ended) return
    ended = true
    done(extra)
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done: finished } = await reader.read()
        if (finished) {
          controller.close()
          end()
        } else {
          controller.enqueue(value)
        }
      } catch (error) {
        end({ stream_error: String(error) })
        controller.error(error)
      }
    },
    async cancel(reason) {
      end({ aborted: true })
      await reader.cancel(reason)
    },
  })
}

function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment).slice(0, 200)
  } catch {
    return segment.slice(0, 200)
  }
}
