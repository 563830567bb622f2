import type { ExecutionContext, Hono } from 'hono'
import { SessionService } from '../../src/core/session-service.ts'
import { operatorLogLine } from '../../src/shared/operator-log-line.ts'
import { createApp } from '../app.ts'
import { BackgroundWorker } from '../background/background-worker.ts'
import type { WorkTrigger } from '../background/work-trigger.ts'
import { claimRedisNamespace } from '../deployment-claim.ts'
import { createDeps, type Deps, type DepsOptions } from '../deps.ts'
import { ConfigError } from '../env-config.ts'
import type { AppEnv } from '../http/app-context.ts'
import type { RequestTimeLeft } from '../http/request-time-left.ts'
import { SocketUpgrades } from '../http/socket-connection.ts'
import { loggedSessionApi } from '../http/turn-log.ts'
import type { StartNotes } from '../sandbox-notices.ts'
import { logStart } from './start-log.ts'
import { checkedAtStart } from './startup-probe.ts'

/** What a runtime entry serves: the Web-standard fetch signature (Workers, Deno, Lambda). */
export type FetchHandler = (
  request: Request,
  bindings?: unknown,
  ctx?: ExecutionContext,
) => Response | Promise<Response>

export type EntryLog = (line: string) => void

export interface EntryLogging {
  /** Where the startup notices go (each runtime has its habit: stdout, stderr, the Worker log). */
  log: EntryLog
  /**
   * The entry writes the start line itself once it knows its URL (Node, after it listens);
   * otherwise it is written as soon as the app is built.
   */
  startLineAtListen?: boolean
  /**
   * The runtime lives on between requests (Node): the app gets a background worker, which the
   * entry starts once it serves (`worker.start()`) and stops at shutdown.
   */
  background?: boolean
  /**
   * The runtime has no loop between requests but a platform queue (the Worker's Queue binding):
   * background work is recorded and answered 202, and this trigger wakes a consumer to run it.
   */
  trigger?: WorkTrigger
  /**
   * The runtime's server can carry out WebSocket upgrades (Node, Deno, Workers): the app serves
   * the Open Responses WebSocket mode, and the entry upgrades what it accepts (`sockets`).
   */
  sockets?: boolean
  /**
   * The platform bounds each request (Lambda's timeout): followed feeds end before it, and turns
   * run in the request pause before it, from the time it says is left.
   */
  timeLeft?: RequestTimeLeft
}

/** The app of one runtime entry, on its deps. */
export interface EntryApp {
  deps: Deps
  /** The service behind the app (a long-running entry preloads it before serving). */
  api: SessionService
  app: Hono<AppEnv>
  fetch: FetchHandler
  /** With `background`: the worker that runs background turns in this process. */
  worker?: BackgroundWorker
  /** What rings the bell for recorded work: the worker, or the runtime's trigger. */
  trigger?: WorkTrigger
  /** With `sockets`: the WebSocket upgrades the app accepted, for the entry's server. */
  sockets?: SocketUpgrades
}

/**
 * The wiring every runtime entry shares, on deps already built: the startup notices (once, and
 * those that come later when they come), the warnings (loudly, on stderr), the structured start
 * line, and the app with everything the deps enable (the signed runner callback and its replay
 * guard in the coordinator, automation webhooks, body limits, followed feeds, the operator log).
 */
export function entryApp(deps: Deps, logging: EntryLogging): EntryApp {
  printNotes(deps, logging)
  void deps.laterNotes?.then((later) => printNotes(later, logging))
  if (!logging.startLineAtListen) logStart(deps)
  const api = new SessionService(deps.service)
  const worker = logging.background ? backgroundWorker(deps, api) : undefined
  const trigger = worker ?? logging.trigger
  const sockets = logging.sockets ? new SocketUpgrades() : undefined
  const app = createApp({
    api,
    auth: deps.auth,
    ...deps.http,
    ...(logging.timeLeft
      ? { follow: { ...deps.http.follow, timeLeft: logging.timeLeft }, timeLeft: logging.timeLeft }
      : {}),
    ...(trigger ? { background: trigger } : {}),
    ...(sockets ? { sockets } : {}),
  })
  const fetch: FetchHandler = (request, bindings, ctx) => app.fetch(request, bindings, ctx)
  return {
    deps,
    api,
    app,
    fetch,
    ...(worker ? { worker } : {}),
    ...(trigger ? { trigger } : {}),
    ...(sockets ? { sockets } : {}),
  }
}

/** Notices on the entry's log, warnings loudly on stderr. */
function printNotes(notes: StartNotes, logging: EntryLogging): void {
  for (const notice of notes.notices) logging.log(`turnline: ${notice}`)
  for (const warning of notes.warnings) {
    const rule = `turnline: ${'!'.repeat(72)}`
    console.error(`${rule}\nturnline: WARNING: ${warning}\n${rule}`)
  }
}

/** The worker of a long-running entry; its runs are logged like turns (TURNLINE_LOG). */
function backgroundWorker(deps: Deps, api: SessionService): BackgroundWorker {
  const { requestLog } = deps.http
  return new BackgroundWorker(requestLog ? loggedSessionApi(api, requestLog) : api, {
    ...deps.background,
    log: (entry) => console.error(operatorLogLine(entry)),
  })
}

/**
 * Builds the deps from the runtime's environment record (functions/deps.ts gives it meaning)
 * and the app on them. Rejects with a ConfigError naming each bad variable; see `onStartupError`.
 */
export async function startEntryApp(
  env: Readonly<Record<string, string | undefined>>,
  options: DepsOptions,
  logging: EntryLogging,
  /** What the runtime refuses the deployment as configured (Deno's flags), one line each. */
  refused?: (deps: Deps) => string[],
): Promise<EntryApp> {
  const deps = await createDeps(env, options)
  const problems = refused?.(deps) ?? []
  if (problems.length > 0) throw new ConfigError(problems)
  return entryApp(await claimedDeps(deps), logging)
}

/**
 * The deps once their store answered and their deployment holds its Redis namespace
 * (functions/deployment-claim.ts): what every entry does before it serves. Rejects with a
 * ConfigError when another deployment holds it, or when the store or coordinator cannot be used
 * as configured (startup-probe.ts).
 */
export async function claimedDeps(deps: Deps): Promise<Deps> {
  const notice = await checkedAtStart(
    (store) => claimRedisNamespace(deps.redisClaim, store, deps.service.coordinator),
    deps.service.sessions.objects,
  )
  if (notice !== undefined) deps.notices.push(notice)
  return deps
}

/**
 * What an entry does when it cannot start: a ConfigError is printed (one line per problem) and
 * the process exits with `code`; without `exit` (Lambda, whose init must fail visibly) it is
 * rethrown after printing. Any other error is rethrown as it is.
 */
export function onStartupError(
  exit?: (code: number) => never,
  code = 1,
): (error: unknown) => never {
  return (error) => {
    if (!(error instanceof ConfigError)) throw error
    console.error(`turnline: ${error.message}`)
    if (exit) return exit(code)
    throw error
  }
}
