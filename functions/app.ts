import { Hono } from 'hono'
import { MemoryCoordinator } from '../adapters/memory/memory-coordinator.ts'
import { MemoryFailureThrottle } from '../adapters/memory/memory-failure-throttle.ts'
import { MemoryReplayGuard } from '../src/contract/runner-signature.ts'
import type { WebhookConfig } from '../src/contract/webhook-config.ts'
import type { SessionApi } from '../src/core/session-api.ts'
import type { DeliveryGuard } from '../src/ports/delivery-guard.ts'
import type { ReplayGuard } from '../src/ports/replay-guard.ts'
import type { Telemetry } from '../src/ports/telemetry.ts'
import { operatorLogLine } from '../src/shared/operator-log-line.ts'
import type { WorkTrigger } from './background/work-trigger.ts'
import { coordinatorDeliveryGuard } from './coordinator-replay-guard.ts'
import type { AppEnv, RouteContext } from './http/app-context.ts'
import { type AuthConfig, createAuthenticator, isSingleTenant } from './http/auth.ts'
import { type AuthFailureLimit, throttledAuthentication } from './http/auth-throttle.ts'
import type { PeerAddress } from './http/client-address.ts'
import { cors } from './http/cors.ts'
import { DEFAULT_FOLLOW, type FollowOptions } from './http/event-feed.ts'
import { FollowedStreams } from './http/followed-streams.ts'
import { hostGuard } from './http/host-guard.ts'
import { type ErrorLog, notFound } from './http/http-errors.ts'
import { errorAnswerFor } from './http/open-responses-errors.ts'
import { type BodyLimits, DEFAULT_BODY_LIMITS } from './http/read-body.ts'
import { type LogSink, requestLogger } from './http/request-log.ts'
import type { RequestTimeLeft } from './http/request-time-left.ts'
import { requestTrace } from './http/request-trace.ts'
import { routeMethods } from './http/route-methods.ts'
import type { SocketUpgrades } from './http/socket-connection.ts'
import { loggedSessionApi } from './http/turn-log.ts'
import { DEFAULT_WEBHOOK_ID_RETENTION_SECONDS } from './http/webhook-guards.ts'
import type { ReferenceScript } from './openapi/docs-page.ts'
import { openApiJsonOf } from './openapi/openapi-document.ts'
import { agentSessionRoutes } from './routes/agent-session-routes.ts'
import { approvalRoutes } from './routes/approval-routes.ts'
import { artifactRoutes } from './routes/artifact-routes.ts'
import { callbackRoutes } from './routes/callback-routes.ts'
import { compactRoutes } from './routes/compact-routes.ts'
import { execRoute } from './routes/exec-route.ts'
import { loopRoutes } from './routes/loop-routes.ts'
import { metaRoutes } from './routes/meta-routes.ts'
import { outputArtifactRoutes } from './routes/output-artifact-routes.ts'
import { responseItemsRoute } from './routes/response-items-route.ts'
import { responsesCompactRoute } from './routes/responses-compact-route.ts'
import { responsesRoute } from './routes/responses-route.ts'
import { responsesSocketRoute } from './routes/responses-socket-route.ts'
import { runnerRoutes } from './routes/runner-callback-route.ts'
import { sessionRoutes } from './routes/session-routes.ts'
import { steeringRoutes } from './routes/steering-routes.ts'
import { turnRoutes } from './routes/turn-routes.ts'
import { usageRoute } from './routes/usage-route.ts'
import { viewerRoutes } from './routes/viewer-routes.ts'
import { webhookRoutes } from './routes/webhook-routes.ts'
import { workRoutes } from './routes/work-routes.ts'
import { requestLimit } from './tenancy/request-limit.ts'
import type { Tenancy } from './tenancy/tenancy.ts'

export interface AppOptions {
  api: SessionApi
  auth: AuthConfig
  limits?: Partial<BodyLimits>
  follow?: Partial<FollowOptions>
  /**
   * Followed streams a tenant may hold open at once (default 64): in this process, and in all
   * instances through `tenancy`'s limiter when there is one.
   */
  maxFollowedStreams?: number
  /** The platform's bound on each request (Lambda's timeout): in-request turns pause before it. */
  timeLeft?: RequestTimeLeft
  /** Structured log sink for faults (5xx); defaults to one JSON line on console.error. */
  log?: ErrorLog
  /** Shown in the OpenAPI document and the docs page. */
  version?: string
  /** The sandbox runner's signing secret(s): enables `POST /v1/runner/callback`. */
  runnerSecret?: string | readonly string[]
  /**
   * Remembers accepted runner callbacks by message id. Give the coordinator's
   * (`coordinatorReplayGuard`) whenever more than one instance serves or the process restarts;
   * the default remembers them in this process only.
   */
  replayGuard?: ReplayGuard
  /** Named automation triggers: enables `POST /v1/webhooks/:name`. */
  webhooks?: Readonly<Record<string, WebhookConfig>>
  /**
   * Remembers accepted webhook delivery ids and whether their sessions stood: the coordinator's (`coordinatorDeliveryGuard`) whenever more than one instance serves or the
   * process restarts; the default remembers them in this process only.
   */
  webhookReplayGuard?: DeliveryGuard
  /** How long the webhook guard remembers an accepted delivery id (default 4 days). */
  webhookIdRetentionSeconds?: number
  /** Operator log: one structured entry per request and per turn (TURNLINE_LOG); none when absent. */
  requestLog?: LogSink
  /**
   * Per-tenant limits and usage: the request window's 429s and RateLimit headers, `GET /v1/usage`.
   * None when absent. Turn admission and quotas are the engine's (ServiceDeps.admission).
   */
  tenancy?: Tenancy
  /**
   * Without keys: the Host names accepted besides loopback (TURNLINE_ALLOWED_HOSTS), or `any`
   * where nothing listens (the CLI's in-process app). Default: loopback only.
   */
  allowedHosts?: readonly string[] | 'any'
  /**
   * Origins whose pages may call the API from a browser (TURNLINE_CORS_ORIGINS), lowercase
   * `scheme://host[:port]`, or `*` (with keys only). Default: none, CORS off.
   */
  corsOrigins?: readonly string[]
  /** The API reference renderer's bundle, where the runtime has a copy (else /docs uses a CDN). */
  referenceScript?: ReferenceScript
  /**
   * With keys: how failed authentications are throttled; failed webhook signatures are counted
   * the same way, keys or not (default: in this process, 60/min).
   */
  authFailures?: AuthFailureLimit
  /** Where a request comes from, the runtime's way: the client failures are counted for. */
  peerAddress?: PeerAddress
  /** Request and turn spans and metrics (OTEL_*, docs/observability.md); none when absent. */
  telemetry?: Telemetry
  /** The background worker (Node): enables 202 answers for background turns and webhooks. */
  background?: WorkTrigger
  /**
   * The runtime's WebSocket upgrades (Node, Deno, Workers): enables the Open Responses WebSocket
   * mode on `GET /v1/responses`; the entry's server carries out the upgrades the app accepts.
   */
  sockets?: SocketUpgrades
}

export const API_VERSION = '0.1.0'

/** A replay guard for one process (tests, the embedded single-process server). */
function inProcess(): ReplayGuard {
  const seen = new MemoryReplayGuard()
  return { claim: async (id, expiresAtMs) => seen.claim(id, expiresAtMs) }
}

/** Failed authentications counted in this process (tests, apps built without deps). */
function inProcessAuthFailures(): AuthFailureLimit {
  const throttle = new MemoryFailureThrottle()
  return { throttle, fallback: throttle, perMinute: 60, trustedProxies: [] }
}

/** Faults on stderr, one JSON line each with `ts` as every operator log line (configuration.md). */
const defaultLog: ErrorLog = (entry) => console.error(operatorLogLine(entry))

/**
 * The Turnline HTTP app (v1). Web-standard only, so the same app runs on Node, Deno, workerd
 * and Lambda; the runtime entries build its dependencies (functions/deps.ts) and serve it.
 */
export function createApp(options: AppOptions): Hono<AppEnv> {
  const log = options.log ?? defaultLog
  const { api } = options
  const follow = { ...DEFAULT_FOLLOW, ...options.follow }
  const ctx: RouteContext = {
    api:
      options.requestLog || options.telemetry
        ? loggedSessionApi(api, options.requestLog, options.telemetry)
        : api,
    limits: { ...DEFAULT_BODY_LIMITS, ...options.limits },
    follow,
    followed: new FollowedStreams({
      max: options.maxFollowedStreams,
      limiter: options.tenancy?.limiter,
      streamMs: follow.maxMs,
      log,
    }),
    log,
    ...(options.background ? { background: options.background } : {}),
    ...(options.timeLeft ? { timeLeft: options.timeLeft } : {}),
  }
  const authenticate = createAuthenticator(options.auth)
  const app = new Hono<AppEnv>()

  if (options.telemetry) app.use('*', requestTrace(options.telemetry))
  if (options.requestLog) app.use('*', requestLogger(options.requestLog))
  // The Open Responses routes answer errors in the specification's envelope.
  app.onError((error, c) => errorAnswerFor(c.req.path)(error, log))
  // Hono hands only Error instances to onError; anything else thrown is caught here.
  app.use('*', async (c, next) => {
    try {
      await next()
    } catch (error) {
      c.res = errorAnswerFor(c.req.path)(error, log)
    }
  })
  if (isSingleTenant(options.auth) && options.allowedHosts !== 'any') {
    const guard = { allowedHosts: options.allowedHosts ?? [], corsOrigins: options.corsOrigins }
    app.use('*', hostGuard(guard, log))
  }
  const methods = routeMethods(app)
  // Before authentication: a browser's preflight carries no key.
  app.use('*', cors({ origins: options.corsOrigins ?? [], methods }))
  app.notFound((c) =>
    notFound(c.req.method, c.req.path, methods(c.req.path), log, errorAnswerFor(c.req.path)),
  )

  const version = options.version ?? API_VERSION
  app.route('/', metaRoutes(version, openApiJsonOf(app, version), options.referenceScript))
  app.route('/', viewerRoutes(version))
  // Signed by the runner instead of a bearer key: mounted before the authentication.
  if (options.runnerSecret) {
    app.route('/v1', runnerRoutes(ctx, options.runnerSecret, options.replayGuard ?? inProcess()))
  }
  // Standard Webhooks signatures instead of a bearer key, likewise.
  if (options.webhooks) {
    const guards = {
      replayGuard:
        options.webhookReplayGuard ??
        coordinatorDeliveryGuard(new MemoryCoordinator(), 'webhook-delivery'),
      idRetentionSeconds: options.webhookIdRetentionSeconds ?? DEFAULT_WEBHOOK_ID_RETENTION_SECONDS,
      failures: options.authFailures ?? inProcessAuthFailures(),
      peer: options.peerAddress,
      log: options.requestLog ?? log,
    }
    app.route('/v1', webhookRoutes(ctx, options.webhooks, guards))
  }
  if (isSingleTenant(options.auth)) {
    app.use('/v1/*', async (c, next) => {
      c.set('tenant', await authenticate(c.req.header('authorization')))
      await next()
    })
  } else {
    const limit = options.authFailures ?? inProcessAuthFailures()
    const opLog = options.requestLog ?? log
    app.use(
      '/v1/*',
      throttledAuthentication(authenticate, { limit, peer: options.peerAddress, log: opLog }),
    )
  }
  if (options.tenancy) {
    app.use('/v1/*', requestLimit(options.tenancy, log))
    app.route('/v1', usageRoute(options.tenancy))
  }
  app.route('/v1', sessionRoutes(ctx))
  app.route('/v1', callbackRoutes(ctx))
  app.route('/v1', outputArtifactRoutes(ctx))
  app.route('/v1', turnRoutes(ctx))
  app.route('/v1', workRoutes(ctx))
  app.route('/v1', steeringRoutes(ctx))
  app.route('/v1', approvalRoutes(ctx))
  app.route('/v1', compactRoutes(ctx))
  app.route('/v1', execRoute(ctx))
  app.route('/v1', responsesRoute(ctx))
  app.route('/v1', responseItemsRoute(ctx))
  app.route('/v1', responsesCompactRoute(ctx))
  app.route(
    '/v1',
    responsesSocketRoute(ctx, { sockets: options.sockets, authenticate, tenancy: options.tenancy }),
  )
  app.route('/v1', artifactRoutes(ctx))
  app.route('/v1', agentSessionRoutes(ctx))
  app.route('/v1', loopRoutes(ctx))
  return app
}
