import type { ExecutionContext } from 'hono'
import { SessionService } from '../../src/core/session-service.ts'
import { createApp } from '../app.ts'
import type { Deps } from '../deps.ts'
import { logStart } from './start-log.ts'

/** What a runtime entry serves: the Web-standard fetch signature (Workers, Deno, Lambda). */
export type FetchHandler = (
  request: Request,
  bindings?: unknown,
  ctx?: ExecutionContext,
) => Response | Promise<Response>

export type EntryLog = (line: string) => void

const stderr: EntryLog = (line) => console.error(line)

/** The app on deps that are already built; startup notices go to `log` once. */
export function serveApp(deps: Deps, log: EntryLog = stderr): FetchHandler {
  for (const notice of deps.notices) log(`turnline: ${notice}`)
  logStart(deps)
  const app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    limits: deps.http.limits,
    follow: deps.http.follow,
    ...(deps.http.requestLog ? { requestLog: deps.http.requestLog } : {}),
    tenancy: deps.http.tenancy,
  })
  return (request, bindings, ctx) => app.fetch(request, bindings, ctx)
}

/**
 * Builds the app on the first request and reuses it for the life of the process or isolate
 * (Worker bindings only arrive with a request). A build that fails (a configuration error) is
 * logged once and answers every request with a 500 naming the problem, rather than a bare crash.
 */
export function lazyApp(build: () => Promise<Deps>, log: EntryLog = stderr): FetchHandler {
  let ready: Promise<FetchHandler> | undefined
  return async (request, bindings, ctx) => {
    ready ??= build().then(
      (deps) => serveApp(deps, log),
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error)
        log(`turnline: cannot start: ${message}`)
        return () => startupFailure(message)
      },
    )
    return (await ready)(request, bindings, ctx)
  }
}

function startupFailure(message: string): Response {
  return Response.json(
    { error: { code: 'internal', message: `the server cannot start: ${message}` } },
    { status: 500 },
  )
}
