import type { ExecutionContext } from 'hono'
import { operatorLogLine } from '../../src/shared/operator-log-line.ts'
import type { WorkTrigger } from '../background/work-trigger.ts'
import type { Deps } from '../deps.ts'
import { ConfigError } from '../env-config.ts'
import { streamedBody, whenBodyEnds } from '../http/body-end.ts'
import { errorResponse } from '../http/http-errors.ts'
import { type EntryApp, type EntryLog, entryApp, type FetchHandler } from './entry-app.ts'
import { type SocketAcceptor, withSocketUpgrades } from './standard-sockets.ts'

/**
 * One set of deps and one app per isolate, for runtimes whose configuration arrives with each
 * call (Worker bindings): built on the first request, queue batch or scheduled run from that
 * call's bindings, then reused for the life of the isolate.
 */
export interface IsolateApp {
  fetch: (
    request: Request,
    bindings: unknown,
    ctx?: Parameters<FetchHandler>[2],
  ) => Promise<Response>
  /**
   * The isolate's app and service (a queue batch, a scheduled run); rejects when the
   * configuration is invalid.
   */
  app(bindings: unknown): Promise<EntryApp>
}

/**
 * A build that fails on the configuration (a ConfigError) is logged once and answers every
 * request with a 500 naming the problem, rather than a bare crash; a scheduled run or a queue
 * batch rejects with it. One that fails on a fault worth retrying (the store or Upstash briefly
 * unreachable at the isolate's first call) answers that call with the fault (503 and
 * Retry-After) and is built again at the next: a process would be restarted, an isolate lives on. `triggerOf` gives the app its background trigger from the bindings (the Worker's
 * Queue), where there is one. With telemetry on, each request's spans are exported before the
 * isolate's request ends (`ctx.waitUntil`): an isolate runs no timer once its requests are done.
 */
export function isolateApp(
  build: (bindings: unknown) => Promise<Deps>,
  log: EntryLog,
  triggerOf?: (bindings: unknown, deps: Deps) => WorkTrigger | undefined,
  /** The runtime's WebSocket upgrade (the Worker's WebSocketPair): serves the WebSocket mode. */
  acceptSockets?: SocketAcceptor,
): IsolateApp {
  let app: Promise<EntryApp> | undefined
  let ready: Promise<FetchHandler> | undefined
  const appOf = (bindings: unknown) => {
    if (app) return app
    const building = build(bindings).then((built) => {
      const trigger = triggerOf?.(bindings, built)
      return entryApp(built, {
        log,
        ...(trigger ? { trigger } : {}),
        ...(acceptSockets ? { sockets: true } : {}),
      })
    })
    app = building
    // A fault worth retrying (the store or Upstash briefly down) is not kept for the isolate's
    // life: the next call builds again. A configuration error is kept (nothing changes it).
    building.catch((error: unknown) => {
      if (!(error instanceof ConfigError) && app === building) app = undefined
    })
    return building
  }
  return {
    app: appOf,
    async fetch(request, bindings, ctx) {
      ready ??= appOf(bindings).then(
        (built): FetchHandler => {
          const served =
            built.sockets && acceptSockets
              ? withSocketUpgrades(built.fetch, built.sockets, acceptSockets)
              : built.fetch
          const flush = built.deps.flushTelemetry
          if (!flush) return served
          return async (request, env, ctx) =>
            flushedAfter(await served(request, env, ctx), flush, ctx)
        },
        (error: unknown) => {
          const message = error instanceof Error ? error.message : String(error)
          log(`turnline: cannot start: ${message}`)
          if (error instanceof ConfigError) return () => startupFailure(message)
          // Answered as such (503 and Retry-After for an outage); the next request starts again.
          ready = undefined
          return () => errorResponse(error, (entry) => log(operatorLogLine(entry)))
        },
      )
      return (await ready)(request, bindings, ctx)
    },
  }
}

/**
 * Hands the telemetry export to `ctx.waitUntil` once the answer is complete: at once for a
 * plain answer, when its body ends for a streamed one (whose request span ends then).
 */
function flushedAfter(
  response: Response,
  flush: () => Promise<void>,
  ctx: ExecutionContext | undefined,
): Response {
  if (!ctx) return response
  const exported = () => flush().catch(() => {})
  const body = streamedBody(response)
  if (!body) {
    ctx.waitUntil(exported())
    return response
  }
  let ended: () => void = () => {}
  ctx.waitUntil(new Promise<void>((resolve) => (ended = resolve)).then(exported))
  return new Response(
    whenBodyEnds(body, () => ended()),
    response,
  )
}

function startupFailure(message: string): Response {
  return Response.json(
    { error: { code: 'internal', message: `the server cannot start: ${message}` } },
    { status: 500 },
  )
}
