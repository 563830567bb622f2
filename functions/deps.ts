import { deferredSdkMcpClient } from '../adapters/mcp/deferred-mcp-client.ts'
import type { SigV4Hashes } from '../adapters/s3/sigv4.ts'
import type { Gzip } from '../src/contract/batch-encoding.ts'
import type { ServiceDeps } from '../src/core/session-service.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { FailureThrottle } from '../src/ports/failure-throttle.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import type { Telemetry } from '../src/ports/telemetry.ts'
import type { TenantLimiter } from '../src/ports/tenant-limiter.ts'
import { randomIds } from '../src/shared/random-ids.ts'
import { systemClock } from '../src/shared/system-clock.ts'
import { SessionStore } from '../src/store/session-store.ts'
import type { AnthropicPlatformBackends } from './anthropic-choice.ts'
import { API_VERSION } from './app.ts'
import { callbackDeps } from './callback-choice.ts'
import { coordinatorOf, type RedisKeyspace, redisNamespaceOf } from './coordinator-choice.ts'
import { type AppReplayGuards, replayGuardsOf } from './coordinator-replay-guard.ts'
import { type RedisClaim, redisClaimOf } from './deployment-claim.ts'
import { type EnvConfig, ioDeadline, parseEnv } from './env-config.ts'
import { type AuthConfig, isSingleTenant, tenantsOf } from './http/auth.ts'
import type { AuthFailureLimit } from './http/auth-throttle.ts'
import type { PeerAddress } from './http/client-address.ts'
import type { FollowOptions } from './http/event-feed.ts'
import type { BodyLimits } from './http/read-body.ts'
import { jsonLines, type LogSink } from './http/request-log.ts'
import { chooseModel, type ModelChoice } from './model-choice.ts'
import type { ReferenceScript } from './openapi/docs-page.ts'
import { type DefaultRunner, sandboxRunnerOf } from './runner-choice.ts'
import type { StartNotes } from './sandbox-notices.ts'
import { objectStoreOf, storeKindOf } from './store-choice.ts'
import { type ContextStorageFactory, telemetryOf, traced } from './telemetry-choice.ts'
import { authFailureLimit } from './tenancy/auth-throttle-deps.ts'
import type { Tenancy } from './tenancy/tenancy.ts'
import { tenancyParts } from './tenancy/tenancy-deps.ts'
import { tenantAdmission } from './tenancy/tenant-admission.ts'
import { type TenantFetchOptions, tenantFetches, wrapMcpFetches } from './tenant-fetch.ts'
import { randomMasterSecret, TenantSecretBook } from './tool-secrets.ts'
import { workDefaults } from './work-env.ts'

/**
 * The only reader of configuration. Each runtime entry passes its environment record
 * (`process.env`, `Deno.env.toObject()`, the Worker `env`) and what only it can provide: the
 * embedded filesystem store exists on Node and Deno, so it is passed in rather than imported
 * here (a Worker bundle must not pull in `node:fs`).
 */
export interface DepsOptions extends TenantFetchOptions, AnthropicPlatformBackends {
  /** The embedded default store, given TURNLINE_DATA_DIR (Node: FsObjectStore). */
  defaultStore?: (dataDir: string) => ObjectStore
  /** No filesystem store (a Worker): sessions in memory when S3_BUCKET and TURNLINE_STORE are unset. */
  memoryStoreByDefault?: boolean
  /** Compresses batches (Node: node:zlib's; default: the Web-standard CompressionStream). */
  gzip?: Gzip
  /**
   * fetch for the model client, the runner, Upstash, and HTTP tools and MCP servers on hosts the
   * operator names (default: the global one); hosts only `*` allows: `checkedFetch`.
   */
  fetch?: typeof fetch
  /** The S3 client's signing hashes (Node, Lambda: node:crypto's; default Web Crypto's). */
  sigv4Hashes?: SigV4Hashes
  /**
   * The embedded sandbox runner when TURNLINE_RUNNER_URL is not set (Node starts the reference
   * runner as a child process). With `sandbox.mode` `require` (always in multi-tenant mode) it
   * must throw a ConfigError when there is no working sandbox.
   */
  defaultRunner?: DefaultRunner
  log?: (entry: Record<string, unknown>) => void
  /** The coordinator for REDIS_URL (Node, Lambda: a Worker bundle pulls in no TCP client). */
  redisCoordinator?: (url: string, keyspace: RedisKeyspace) => Coordinator
  /** The per-tenant limiter on REDIS_URL, passed by the same entries. */
  redisLimiter?: (url: string, keyspace: RedisKeyspace) => TenantLimiter
  /** The failed-authentication counters on REDIS_URL, likewise. */
  redisThrottle?: (url: string, keyspace: RedisKeyspace) => FailureThrottle
  /**
   * The three above, imported only when REDIS_URL is set (Node: the TCP client, ioredis, costs
   * a start without Redis ≈ 80 ms of CPU); they replace the ones given directly.
   */
  redisTcp?: () => Promise<Pick<DepsOptions, 'redisCoordinator' | 'redisLimiter' | 'redisThrottle'>>
  /** Where a request comes from, the runtime's way (the socket, CF-Connecting-IP, …). */
  peerAddress?: PeerAddress
  /** Sink of the request and turn lines when TURNLINE_LOG=json (default: JSON lines on stdout). */
  requestLog?: LogSink
  /** Tokenizer for compaction estimates (default: gpt-tokenizer, loaded on first use). */
  tokenizer?: ServiceDeps['tokenizer']
  /** The API reference renderer's bundle, where the runtime has a copy (Node: from node_modules). */
  referenceScript?: ReferenceScript
  /** The runtime cannot hold itself to loopback (Workers, Lambda, Deno): see parseEnv. */
  reachableFromAnywhere?: boolean
  /** Many instances at once (Workers, Lambda): S3 needs a shared Redis (coordinator-choice.ts). */
  manyInstances?: boolean
  /** The async context spans live in (AsyncLocalStorage); without it nothing is traced. */
  contextStorage?: ContextStorageFactory
}

export interface Deps {
  service: ServiceDeps
  auth: AuthConfig
  /** HTTP options for createApp. */
  http: {
    limits: Partial<BodyLimits>
    follow: Partial<FollowOptions>
    /** Followed streams a tenant may hold open at once (counted in `tenancy`'s limiter). */
    maxFollowedStreams: number
    /** Enables the signed runner callback route. */
    runnerSecret?: string
    /** Accepted runner callbacks and webhook delivery ids, in the coordinator (all instances). */
    replayGuard: AppReplayGuards['replayGuard']
    webhookReplayGuard: AppReplayGuards['webhookReplayGuard']
    webhookIdRetentionSeconds: AppReplayGuards['webhookIdRetentionSeconds']
    /** Enables `POST /v1/webhooks/:name`. */
    webhooks?: EnvConfig['TURNLINE_WEBHOOKS']
    /** One structured line per request and per turn (TURNLINE_LOG=json). */
    requestLog?: LogSink
    /** Per-tenant limits and usage (docs/configuration.md#tenancy). */
    tenancy: Tenancy
    /** Host names an unauthenticated server answers besides loopback. */
    allowedHosts: readonly string[]
    /** Origins whose pages may call the API from a browser (CORS); none by default. */
    corsOrigins: readonly string[]
    referenceScript?: ReferenceScript
    /** Failed authentications (and webhook signatures) throttled, in the coordinator if any. */
    authFailures?: AuthFailureLimit
    peerAddress?: PeerAddress
    /** Request spans and metrics (OTEL_*); absent when nothing is exported. */
    telemetry?: Telemetry
  }
  /** Sends what telemetry waits to send (a shutdown, the end of an invocation); absent when off. */
  flushTelemetry?: () => Promise<void>
  /** Where the Node entry listens. */
  server: { port: number; host: string }
  /** The background worker of a long-running entry (functions/background/background-worker.ts). */
  background: { sweepMs: number; concurrency: number }
  /** Startup notes worth printing (defaults chosen, data that does not survive a restart). */
  notices: string[]
  /** Startup warnings to print loudly (commands running unsandboxed). */
  warnings: string[]
  /** Notes known after the start (the runner's commands' network), printed when they come. */
  laterNotes?: Promise<StartNotes>
  /**
   * The Redis namespace this deployment must hold before it serves (`claimRedisNamespace`, which
   * the entries run); absent with a coordinator in the process or sessions in memory.
   */
  redisClaim?: RedisClaim
  /** The model that answers (provider, default model, endpoint), for the start log. */
  model: ModelChoice
  config: EnvConfig
}

const LOOPBACK_TOOL_HOSTS = ['127.0.0.1', 'localhost', '[::1]']

/** Builds everything the app needs from an environment record; throws ConfigError. */
export async function createDeps(
  env: Readonly<Record<string, string | undefined>>,
  given: DepsOptions = {},
): Promise<Deps> {
  const config = parseEnv(env, given)
  const options =
    config.REDIS_URL !== undefined && given.redisTcp
      ? { ...given, ...(await given.redisTcp()) }
      : given
  const notices: string[] = []
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init))
  const telemetry = await telemetryOf(config, options, fetchImpl, API_VERSION, notices)
  const trace = traced(telemetry)
  const store = trace.store(
    await objectStoreOf(config, options, notices),
    storeKindOf(config, options) ?? 'store',
  )
  const calls = ioDeadline(config, config.TURNLINE_COORDINATOR_TIMEOUT_MS ?? 3_000)
  const sessions = new SessionStore({ store, ...(options.gzip ? { gzip: options.gzip } : {}) })
  const coordinator = trace.coordinator(coordinatorOf(config, options, calls, notices, sessions))
  const secrets = new TenantSecretBook(config.TURNLINE_TOOL_SECRET ?? randomMasterSecret())
  const { tenancy, registry } = tenancyParts({
    config,
    store,
    deadline: calls,
    redisLimiter: options.redisLimiter,
    fetch: options.fetch,
    onTenants: (tenants) => secrets.add(tenants),
    notices,
    log: options.log,
  })
  const auth: AuthConfig = {
    keys: config.TURNLINE_API_KEYS ?? [],
    ...(registry ? { registry } : {}),
  }
  const authFailures = authFailureLimit(config, calls, options)
  const singleTenant = isSingleTenant(auth)
  if (singleTenant) {
    notices.push('single-tenant mode (no TURNLINE_API_KEYS): every request is tenant "local"')
  }
  const allowedHosts =
    config.TURNLINE_TOOL_ALLOWED_HOSTS ?? (singleTenant ? LOOPBACK_TOOL_HOSTS : [])
  const tenantFetch = tenantFetches(config, allowedHosts, options, fetchImpl)
  const chosen = await chooseModel(config, fetchImpl, options)
  const modelChoice = chosen.choice
  const model = trace.model(chosen.client, config, modelChoice)
  notices.push(modelChoice.notice)

  if (config.TURNLINE_TOOL_SECRET === undefined) {
    notices.push(
      'TURNLINE_TOOL_SECRET is not set: HTTP tool calls are signed with a random secret made at ' +
        'startup, so receivers cannot verify signatures across restarts',
    )
  }
  await secrets.add(tenantsOf(auth))
  const warnings: string[] = []
  const runner = await sandboxRunnerOf(
    config,
    env,
    {
      defaultRunner: options.defaultRunner,
      storeDir: storeKindOf(config, options) === 'fs' ? config.TURNLINE_DATA_DIR : undefined,
    },
    trace.fetch(fetchImpl),
    notices,
    warnings,
  )

  const service: ServiceDeps = {
    sessions,
    coordinator,
    models: () => model,
    clock: systemClock,
    ids: randomIds,
    tools: {
      fetch: trace.fetch(tenantFetch.tools),
      allowedHosts,
      secretFor: secrets.secretFor,
      timeoutMs: config.TURNLINE_TOOL_TIMEOUT_MS,
      maxResponseBytes: config.TURNLINE_TOOL_MAX_RESPONSE_BYTES,
      maxOutputBytes: Math.max(
        config.TURNLINE_TOOL_MAX_OUTPUT_BYTES,
        config.TURNLINE_TOOL_MAX_RESPONSE_BYTES,
      ),
      maxSessionOutputBytes: config.TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES,
    },
    defaults: {
      ...(modelChoice.defaultModel === undefined ? {} : { model: modelChoice.defaultModel }),
      modelApi: modelChoice.api,
      leaseMs: config.TURNLINE_LEASE_MS,
      idempotencyTtlSeconds: config.TURNLINE_IDEMPOTENCY_TTL_SECONDS,
      invocationBudgetMs: config.TURNLINE_INVOCATION_BUDGET_MS,
      ...workDefaults(config),
    },
    ...(runner ? { sandbox: { runner: runner.client } } : {}),
    mcp: {
      client: deferredSdkMcpClient(wrapMcpFetches(tenantFetch.mcp, trace.fetch)),
      servers: config.TURNLINE_MCP_SERVERS ?? [],
    },
    ...(options.log ? { log: options.log } : {}),
    ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
    admission: tenantAdmission(tenancy),
    callbacks: callbackDeps({
      config,
      sessions,
      singleTenant,
      options,
      platformFetch: fetchImpl,
      secretFor: secrets.secretFor,
      owner: randomIds.uuid(),
    }),
    ...(telemetry ? { telemetry } : {}),
  }
  const redisClaim = redisClaimOf(config, store, coordinator, redisNamespaceOf(config))
  return {
    service,
    auth,
    http: {
      limits: { maxBytes: config.TURNLINE_MAX_BODY_BYTES },
      follow: {
        maxMs: config.TURNLINE_FOLLOW_MAX_SECONDS * 1000,
        pollMs: config.TURNLINE_FOLLOW_POLL_MS,
      },
      maxFollowedStreams: config.TURNLINE_MAX_FOLLOWED_STREAMS,
      ...(runner ? { runnerSecret: runner.secret } : {}),
      ...replayGuardsOf(coordinator, config.TURNLINE_WEBHOOK_ID_RETENTION_SECONDS),
      ...(config.TURNLINE_WEBHOOKS ? { webhooks: config.TURNLINE_WEBHOOKS } : {}),
      ...(config.TURNLINE_LOG === 'json' ? { requestLog: options.requestLog ?? jsonLines } : {}),
      tenancy,
      allowedHosts: config.TURNLINE_ALLOWED_HOSTS ?? [],
      corsOrigins: config.TURNLINE_CORS_ORIGINS ?? [],
      ...(options.referenceScript ? { referenceScript: options.referenceScript } : {}),
      ...(authFailures ? { authFailures } : {}),
      ...(options.peerAddress ? { peerAddress: options.peerAddress } : {}),
      ...(telemetry ? { telemetry } : {}),
    },
    ...(telemetry ? { flushTelemetry: () => telemetry.flush() } : {}),
    server: { port: config.PORT, host: config.HOST },
    background: {
      sweepMs: config.TURNLINE_WORK_SWEEP_MS,
      concurrency: config.TURNLINE_WORK_CONCURRENCY,
    },
    notices,
    warnings,
    ...(runner?.laterNotes ? { laterNotes: runner.laterNotes } : {}),
    model: modelChoice,
    ...(redisClaim === undefined ? {} : { redisClaim }),
    config,
  }
}
