import { createSdkMcpClient } from '../adapters/mcp/sdk-mcp-client.ts'
import type { SandboxStatus } from '../adapters/runner/command-sandbox.ts'
import { type SandboxSettings, sandboxSettingsFrom } from '../adapters/runner/sandbox-settings.ts'
import { HttpSandboxRunner } from '../adapters/sandbox-http/http-sandbox-runner.ts'
import type { ServiceDeps } from '../src/core/session-service.ts'
import { randomIds, systemClock } from '../src/ports/clock.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { coordinatorReplayGuard, type ReplayGuard } from '../src/ports/replay-guard.ts'
import type { TenantLimiter } from '../src/ports/tenant-limiter.ts'
import { SessionStore } from '../src/store/session-store.ts'
import { coordinatorOf, type RedisKeyspace, redisNamespaceOf } from './coordinator-choice.ts'
import { type RedisClaim, redisClaimOf } from './deployment-claim.ts'
import { type EnvConfig, ioDeadline, parseEnv } from './env-config.ts'
import { type AuthConfig, isSingleTenant, tenantsOf } from './http/auth.ts'
import type { FollowOptions } from './http/event-feed.ts'
import type { BodyLimits } from './http/read-body.ts'
import { jsonLines, type LogSink } from './http/request-log.ts'
import { chooseModel, type ModelChoice } from './model-choice.ts'
import { objectStoreOf } from './store-choice.ts'
import type { Tenancy } from './tenancy/tenancy.ts'
import { usageMeter } from './tenancy/tenancy.ts'
import { tenancyParts } from './tenancy/tenancy-deps.ts'
import { isMultiTenantEnv } from './tenancy/tenancy-env.ts'
import { randomMasterSecret, TenantSecretBook } from './tool-secrets.ts'

/**
 * The only reader of configuration. Each runtime entry passes its environment record
 * (`process.env`, `Deno.env.toObject()`, the Worker `env`) and what only it can provide: the
 * embedded filesystem store exists on Node and Deno, so it is passed in rather than imported
 * here (a Worker bundle must not pull in `node:fs`).
 */
export interface DepsOptions {
  /** The embedded default store, given TURNLINE_DATA_DIR (Node: FsObjectStore). */
  defaultStore?: (dataDir: string) => ObjectStore
  /** No filesystem store (a Worker): sessions in memory when S3_BUCKET and TURNLINE_STORE are unset. */
  memoryStoreByDefault?: boolean
  /** fetch for the model client, HTTP tools and MCP servers (default: the global one). */
  fetch?: typeof fetch
  /**
   * The embedded sandbox runner when TURNLINE_RUNNER_URL is not set (Node starts the reference
   * runner in-process): its URL, signing secret and what its sandbox probe found. With
   * `sandbox.mode` `require` (always in multi-tenant mode) it must throw a ConfigError when
   * there is no working sandbox.
   */
  defaultRunner?: (
    dataDir: string,
    server: { host: string; port: number },
    sandbox: SandboxSettings,
  ) => Promise<{ url: string; secret: string; sandbox: SandboxStatus }>
  log?: (entry: Record<string, unknown>) => void
  /**
   * The coordinator for REDIS_URL (plain Redis over TCP). Only entries with TCP sockets pass it
   * (Node, Lambda), so a Worker bundle never pulls in a TCP client.
   */
  redisCoordinator?: (url: string, keyspace: RedisKeyspace) => Coordinator
  /** The per-tenant limiter on REDIS_URL, passed by the same entries. */
  redisLimiter?: (url: string, keyspace: RedisKeyspace) => TenantLimiter
  /** Sink of the request and turn lines when TURNLINE_LOG=json (default: JSON lines on stdout). */
  requestLog?: LogSink
  /** Tokenizer for compaction estimates (default: gpt-tokenizer, loaded on first use). */
  tokenizer?: ServiceDeps['tokenizer']
  /** The runtime cannot hold itself to loopback (Workers, Lambda, Deno): see parseEnv. */
  reachableFromAnywhere?: boolean
}

export interface Deps {
  service: ServiceDeps
  auth: AuthConfig
  /** HTTP options for createApp. */
  http: {
    limits: Partial<BodyLimits>
    follow: Partial<FollowOptions>
    /** Enables the signed runner callback route. */
    runnerSecret?: string
    /** Accepted runner callbacks, by message id, in the coordinator (all instances). */
    replayGuard: ReplayGuard
    /** Enables `POST /v1/webhooks/:name`. */
    webhooks?: EnvConfig['TURNLINE_WEBHOOKS']
    /** One structured line per request and per turn (TURNLINE_LOG=json). */
    requestLog?: LogSink
    /** Per-tenant limits and usage (docs/configuration.md#tenancy). */
    tenancy: Tenancy
  }
  /** Where the Node entry listens. */
  server: { port: number; host: string }
  /** Startup notes worth printing (defaults chosen, data that does not survive a restart). */
  notices: string[]
  /** Startup warnings to print loudly (commands running unsandboxed). */
  warnings: string[]
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
  options: DepsOptions = {},
): Promise<Deps> {
  const config = parseEnv(env, options)
  const notices: string[] = []
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init))
  const store = objectStoreOf(config, options, notices)
  const calls = ioDeadline(config, config.TURNLINE_COORDINATOR_TIMEOUT_MS ?? 3_000)
  const coordinator = coordinatorOf(config, options, calls, notices)
  const secrets = new TenantSecretBook(config.TURNLINE_TOOL_SECRET ?? randomMasterSecret())
  const { tenancy, registry } = tenancyParts({
    config,
    store,
    deadline: calls,
    redisLimiter: options.redisLimiter,
    onTenants: (tenants) => secrets.add(tenants),
    notices,
    log: options.log,
  })
  const auth: AuthConfig = {
    keys: config.TURNLINE_API_KEYS ?? [],
    ...(registry ? { registry } : {}),
  }
  const singleTenant = isSingleTenant(auth)
  if (singleTenant) {
    notices.push('single-tenant mode (no TURNLINE_API_KEYS): every request is tenant "local"')
  }
  const { client: model, choice: modelChoice } = chooseModel(config, fetchImpl)
  notices.push(modelChoice.notice)

  if (config.TURNLINE_TOOL_SECRET === undefined) {
    notices.push(
      'TURNLINE_TOOL_SECRET is not set: HTTP tool calls are signed with a random secret made at ' +
        'startup, so receivers cannot verify signatures across restarts',
    )
  }
  await secrets.add(tenantsOf(auth))
  const warnings: string[] = []
  const runner = await sandboxRunner(config, options, fetchImpl, notices, warnings)

  const service: ServiceDeps = {
    sessions: new SessionStore({ store }),
    coordinator,
    models: () => model,
    clock: systemClock,
    ids: randomIds,
    tools: {
      fetch: fetchImpl,
      allowedHosts: config.TURNLINE_TOOL_ALLOWED_HOSTS ?? (singleTenant ? LOOPBACK_TOOL_HOSTS : []),
      secretFor: secrets.secretFor,
      timeoutMs: config.TURNLINE_TOOL_TIMEOUT_MS,
      maxResponseBytes: config.TURNLINE_TOOL_MAX_RESPONSE_BYTES,
    },
    defaults: {
      ...(modelChoice.defaultModel === undefined ? {} : { model: modelChoice.defaultModel }),
      modelApi: config.TURNLINE_MODEL_API,
      leaseMs: config.TURNLINE_LEASE_MS,
      idempotencyTtlSeconds: config.TURNLINE_IDEMPOTENCY_TTL_SECONDS,
      invocationBudgetMs: config.TURNLINE_INVOCATION_BUDGET_MS,
    },
    ...(runner ? { sandbox: { runner: runner.client } } : {}),
    mcp: {
      client: createSdkMcpClient({ fetch: fetchImpl }),
      servers: config.TURNLINE_MCP_SERVERS ?? [],
    },
    ...(options.log ? { log: options.log } : {}),
    ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
    meter: usageMeter(tenancy),
  }
  return {
    service,
    auth,
    http: {
      limits: { maxBytes: config.TURNLINE_MAX_BODY_BYTES },
      follow: {
        maxMs: config.TURNLINE_FOLLOW_MAX_SECONDS * 1000,
        pollMs: config.TURNLINE_FOLLOW_POLL_MS,
      },
      ...(runner ? { runnerSecret: runner.secret } : {}),
      replayGuard: coordinatorReplayGuard(coordinator, 'runner-callback'),
      ...(config.TURNLINE_WEBHOOKS ? { webhooks: config.TURNLINE_WEBHOOKS } : {}),
      ...(config.TURNLINE_LOG === 'json' ? { requestLog: options.requestLog ?? jsonLines } : {}),
      tenancy,
    },
    server: { port: config.PORT, host: config.HOST },
    notices,
    warnings,
    model: modelChoice,
    ...redisClaimField(redisClaimOf(config, store, coordinator, redisNamespaceOf(config))),
    config,
  }
}

/** The sandbox runner: configured by URL and secret, else the entry's embedded one, else none. */
async function sandboxRunner(
  config: EnvConfig,
  options: DepsOptions,
  fetchImpl: typeof fetch,
  notices: string[],
  warnings: string[],
): Promise<{ client: HttpSandboxRunner; secret: string } | undefined> {
  let url = config.TURNLINE_RUNNER_URL
  let secret = config.TURNLINE_RUNNER_SECRET
  if (url === undefined && options.defaultRunner) {
    const settings = sandboxSettingsFrom(config)
    // Several tenants: their commands run sandboxed or not at all.
    const multiTenant = isMultiTenantEnv(config)
    const embedded = await options.defaultRunner(
      config.TURNLINE_DATA_DIR,
      { host: config.HOST, port: config.PORT },
      multiTenant ? { ...settings, mode: 'require' } : settings,
    )
    url = embedded.url
    secret = embedded.secret
    notices.push(
      `sandbox: the reference runner in this process (${url}), workspaces under ${config.TURNLINE_DATA_DIR}/runner`,
    )
    const status = embedded.sandbox
    if (status.isolation === 'bwrap') {
      notices.push(
        `sandbox: commands run in bubblewrap ${status.version} as uid ${status.uid}, network ` +
          `${status.network === 'session' ? 'only for sessions that allow it' : status.network}, ` +
          `limits ${status.limits.memoryMb} MiB memory, ${status.limits.cpuSeconds} s CPU, ` +
          `${status.limits.timeLimitSeconds} s wall clock per command`,
      )
      warnings.push(...status.warnings.map((warning) => `sandbox: ${warning}`))
    } else {
      warnings.push(
        `commands run UNSANDBOXED (${status.reason}): as uid ${status.uid}${status.uid === 0 ? ' (root)' : ''}, ` +
          "with this server's files, processes and network; a command can read this server's " +
          'environment (its secrets) through /proc. Fine for one trusted user on this machine; ' +
          'never serve others like this (with TURNLINE_API_KEYS the server refuses to start).',
      )
    }
  }
  if (url === undefined || secret === undefined) {
    notices.push(
      'no sandbox runner (TURNLINE_RUNNER_URL and TURNLINE_RUNNER_SECRET): sessions have their HTTP tools only',
    )
    return undefined
  }
  return { client: new HttpSandboxRunner({ url, secret, fetch: fetchImpl }), secret }
}

function redisClaimField(claim: RedisClaim | undefined): { redisClaim?: RedisClaim } {
  return claim === undefined ? {} : { redisClaim: claim }
}
