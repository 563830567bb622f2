import * as z from 'zod'
import { OPENAI_COMPATIBLE_PROVIDERS } from '../adapters/openai/provider-profile.ts'
import { SandboxEnvShape } from '../adapters/runner/sandbox-settings.ts'
import type { IoDeadline } from '../adapters/shared/io-deadline.ts'
import { CallbackEnvShape } from '../src/contract/callback-env.ts'
import { REDIS_NAMESPACE } from '../src/contract/deployment-identity.ts'
import {
  envJson,
  envList,
  envFlag as flag,
  envInteger as integer,
} from '../src/contract/env-values.ts'
import { McpServersSchema } from '../src/contract/mcp-config.ts'
import { ModelApiSchema } from '../src/contract/model-config.ts'
import { WebhooksSchema } from '../src/contract/webhook-config.ts'
import { AnthropicPlatformEnvShape, anthropicPlatformChecks } from './anthropic-platform-env.ts'
import { parseRange } from './http/address-ranges.ts'
import { type ApiKey, parseApiKeys } from './http/auth.ts'
import { CorsOriginsSchema } from './http/cors-origins.ts'
import { WebhookGuardEnvShape } from './http/webhook-guards.ts'
import { TelemetryEnvShape } from './telemetry-env.ts'
import { isMultiTenantEnv, TenancyEnvShape } from './tenancy/tenancy-env.ts'
import { WorkEnvShape } from './work-env.ts'

/**
 * The environment variables Turnline reads (docs/configuration.md describes each), validated
 * with zod. An empty value counts as unset. A bad value is a startup error naming the variable.
 */

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  }
}

const text = z.string().trim().min(1)
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
const list = envList.transform((entries) => entries.map((entry) => entry.toLowerCase()))
const apiKeys = z.string().transform((value, ctx): ApiKey[] => {
  const parsed = parseApiKeys(value)
  if (typeof parsed === 'string') {
    ctx.addIssue({ code: 'custom', message: parsed })
    return z.NEVER
  }
  return parsed
})

const webhooks = envJson('must be a JSON object of named webhooks').pipe(WebhooksSchema)

const mcpServers = envJson('must be a JSON array of MCP servers').pipe(McpServersSchema)

/** `name`, `name:port`, `[v6]` or `[v6]:port` (lowercase after `list`). */
const HOST_NAME = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(:\d{1,5})?$/

export const EnvSchema = z.object({
  TURNLINE_API_KEYS: apiKeys.optional(),
  /** Serve unauthenticated (tenant `local`) where the runtime cannot hold itself to loopback. */
  TURNLINE_SINGLE_TENANT: flag.optional(),
  TURNLINE_DATA_DIR: text.default('./.turnline'),
  TURNLINE_STORE: z.enum(['fs', 's3', 'memory']).optional(),
  TURNLINE_MODEL: text.max(200).optional(),
  /** Default API of sessions; unset → `anthropic` when only Anthropic is configured, else `chat`. */
  TURNLINE_MODEL_API: ModelApiSchema.optional(),
  /** `demo`, or the OpenAI-compatible provider behind OPENAI_BASE_URL (provider-profile.ts). */
  TURNLINE_MODEL_PROVIDER: z.enum(['demo', ...OPENAI_COMPATIBLE_PROVIDERS]).optional(),
  OPENAI_API_KEY: text.optional(),
  OPENAI_BASE_URL: httpUrl.optional(),
  /** Claude: Anthropic's Messages API, or Bedrock or Vertex AI (anthropic-platform-env.ts). */
  ...AnthropicPlatformEnvShape,
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid S3 bucket name')
    .optional(),
  S3_REGION: text.optional(),
  S3_ENDPOINT: httpUrl.optional(),
  S3_FORCE_PATH_STYLE: flag.optional(),
  S3_ACCESS_KEY_ID: text.optional(),
  S3_SECRET_ACCESS_KEY: text.optional(),
  S3_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._/-]{1,200}$/, 'use A-Z a-z 0-9 . _ / -')
    .optional(),
  UPSTASH_REDIS_REST_URL: httpUrl.optional(),
  UPSTASH_REDIS_REST_TOKEN: text.optional(),
  TURNLINE_REDIS_NAMESPACE: z
    .string()
    .regex(REDIS_NAMESPACE, 'use 1–64 characters from A-Z a-z 0-9 . _ -')
    .optional(),
  /**
   * Set by Deno Deploy in every deployment (its users cannot set a DENO_ name): the entry then
   * serves from many isolates at once (coordinator-choice.ts).
   */
  DENO_DEPLOYMENT_ID: text.optional(),
  REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })
    .optional(),
  TURNLINE_TOOL_ALLOWED_HOSTS: list.optional(),
  TURNLINE_TOOL_SECRET: text.min(16, 'must be at least 16 characters').optional(),
  TURNLINE_TOOL_TIMEOUT_MS: integer(100, 300_000).default(30_000),
  TURNLINE_TOOL_MAX_RESPONSE_BYTES: integer(1024, 16 * 1024 * 1024).default(64 * 1024),
  TURNLINE_TOOL_MAX_OUTPUT_BYTES: integer(1024 * 1024, 4 * 1024 * 1024 * 1024).default(
    64 * 1024 * 1024,
  ),
  TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES: integer(1024 * 1024, 1024 * 1024 * 1024 * 1024).default(
    1024 * 1024 * 1024,
  ),
  TURNLINE_LEASE_MS: integer(1000, 3_600_000).default(60_000),
  ...WorkEnvShape,
  /**
   * The SQS queue whose messages ring the bell for background work on Lambda (the bundle's
   * `index.work` consumes it, `index.sweep` rings for what a lost message left).
   */
  TURNLINE_WORK_QUEUE_URL: httpUrl.optional(),
  /**
   * The cron expression of the Worker's trigger that also sweeps retention (the others sweep
   * background work and callbacks only); unset, every trigger does.
   */
  TURNLINE_RETENTION_CRON: text.max(100).optional(),
  TURNLINE_RUNNER_URL: httpUrl.optional(),
  TURNLINE_RUNNER_SECRET: text.min(16, 'must be at least 16 characters').optional(),
  /** The embedded runner's workspaces; default beside TURNLINE_DATA_DIR (node-embedded.ts). */
  TURNLINE_RUNNER_ROOT: text.optional(),
  TURNLINE_WEBHOOKS: webhooks.optional(),
  ...WebhookGuardEnvShape,
  TURNLINE_MCP_SERVERS: mcpServers.optional(),
  TURNLINE_INVOCATION_BUDGET_MS: integer(1000, 3_600_000).default(25_000),
  TURNLINE_IDEMPOTENCY_TTL_SECONDS: integer(60, 30 * 86_400).default(86_400),
  TURNLINE_STORAGE_TIMEOUT_MS: integer(50, 120_000).optional(),
  TURNLINE_COORDINATOR_TIMEOUT_MS: integer(50, 120_000).optional(),
  TURNLINE_IO_BUDGET_MS: integer(50, 600_000).optional(),
  TURNLINE_MAX_BODY_BYTES: integer(1024, 64 * 1024 * 1024).default(1024 * 1024),
  TURNLINE_FOLLOW_MAX_SECONDS: integer(1, 86_400).default(300),
  TURNLINE_FOLLOW_POLL_MS: integer(50, 60_000).default(1000),
  /** Followed streams one tenant may hold open at once, on all instances (followed-streams.ts). */
  TURNLINE_MAX_FOLLOWED_STREAMS: integer(1, 10_000).default(64),
  TURNLINE_LOG: z.enum(['json', 'off']).default('json'),
  PORT: integer(0, 65_535).default(8787),
  HOST: text.default('127.0.0.1'),
  /** Failed authentications per client address per minute (functions/http/auth-throttle.ts). */
  TURNLINE_AUTH_FAILURES_PER_MINUTE: integer(1, 1_000_000).default(60),
  /** Proxies whose X-Forwarded-For names the client (functions/http/client-address.ts). */
  TURNLINE_TRUSTED_PROXIES: list
    .transform((entries, ctx) =>
      entries.map((entry) => {
        const range = parseRange(entry)
        if (!range)
          ctx.addIssue({ code: 'custom', message: `${entry}: not an IP address or CIDR range` })
        return range ?? { bytes: new Uint8Array(16), bits: 128 }
      }),
    )
    .optional(),
  /** Host names an unauthenticated server answers besides loopback (functions/http/host-guard.ts). */
  TURNLINE_ALLOWED_HOSTS: list
    .pipe(z.array(z.string().regex(HOST_NAME, 'each entry is a host name, optionally :port')))
    .optional(),
  /** Origins whose pages may call the API from a browser (functions/http/cors.ts). */
  TURNLINE_CORS_ORIGINS: CorsOriginsSchema.optional(),
  /** The runner's sandbox, the key registry and tenant limits, OTEL_* (see each shape's file). */
  ...SandboxEnvShape,
  ...TenancyEnvShape,
  ...TelemetryEnvShape,
  /** Completion callbacks (src/contract/callback-env.ts). */
  ...CallbackEnvShape,
})

export type EnvConfig = z.output<typeof EnvSchema>

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.test(host)
}

/** Variables that only mean something together. */
function crossChecks(env: EnvConfig): string[] {
  const problems: string[] = anthropicPlatformChecks(env)
  const s3Extras = [
    'S3_REGION',
    'S3_ENDPOINT',
    'S3_FORCE_PATH_STYLE',
    'S3_ACCESS_KEY_ID',
    'S3_SECRET_ACCESS_KEY',
    'S3_PREFIX',
  ] as const
  if (env.S3_BUCKET === undefined) {
    const stray = s3Extras.filter((name) => env[name] !== undefined)
    if (stray.length > 0) problems.push(`${stray.join(', ')}: set S3_BUCKET too, or unset them`)
    if (env.TURNLINE_STORE === 's3') problems.push('TURNLINE_STORE: s3 needs S3_BUCKET')
  }
  if ((env.S3_ACCESS_KEY_ID === undefined) !== (env.S3_SECRET_ACCESS_KEY === undefined)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: set both or neither')
  }
  if ((env.UPSTASH_REDIS_REST_URL === undefined) !== (env.UPSTASH_REDIS_REST_TOKEN === undefined)) {
    problems.push('UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN: set both or neither')
  }
  if (env.REDIS_URL !== undefined && env.UPSTASH_REDIS_REST_URL !== undefined) {
    problems.push('REDIS_URL and UPSTASH_REDIS_REST_URL: choose one coordinator, not both')
  }
  const budget = env.TURNLINE_IO_BUDGET_MS
  if (budget !== undefined && budget >= env.TURNLINE_LEASE_MS) {
    problems.push(
      `TURNLINE_IO_BUDGET_MS: ${budget} must be less than TURNLINE_LEASE_MS (${env.TURNLINE_LEASE_MS}), ` +
        'so a call that keeps failing ends the turn before its lease could lapse',
    )
  }
  for (const name of ['TURNLINE_STORAGE_TIMEOUT_MS', 'TURNLINE_COORDINATOR_TIMEOUT_MS'] as const) {
    const timeout = env[name]
    if (timeout !== undefined && timeout > ioBudgetMs(env)) {
      problems.push(`${name}: ${timeout} exceeds the call budget of ${ioBudgetMs(env)} ms`)
    }
  }
  const singleTenant = !isMultiTenantEnv(env)
  if (singleTenant && !isLoopbackHost(env.HOST)) {
    problems.push(
      `HOST: ${env.HOST} is not a loopback address; without TURNLINE_API_KEYS (or TURNLINE_KEY_REGISTRY) the server is ` +
        'single-tenant and unauthenticated, so it only binds to 127.0.0.1, ::1 or localhost. ' +
        'Set TURNLINE_API_KEYS to serve other hosts.',
    )
  }
  if (!singleTenant && env.TURNLINE_ALLOWED_HOSTS !== undefined) {
    problems.push(
      'TURNLINE_ALLOWED_HOSTS: only an unauthenticated server checks Host names; with ' +
        'TURNLINE_API_KEYS (or TURNLINE_KEY_REGISTRY) keys are what decides: unset it',
    )
  }
  if (singleTenant && env.TURNLINE_CORS_ORIGINS?.includes('*')) {
    problems.push(
      'TURNLINE_CORS_ORIGINS: * is refused without TURNLINE_API_KEYS (or TURNLINE_KEY_REGISTRY): ' +
        'every web page could then drive this unauthenticated server; list the origins instead',
    )
  }
  if (!singleTenant && env.TURNLINE_SINGLE_TENANT === true) {
    problems.push(
      'TURNLINE_SINGLE_TENANT: set together with TURNLINE_API_KEYS (or TURNLINE_KEY_REGISTRY); ' +
        'a server is either unauthenticated or keyed: unset one of them',
    )
  }
  if (!singleTenant && env.TURNLINE_SANDBOX === 'off' && env.TURNLINE_RUNNER_URL === undefined) {
    problems.push(
      'TURNLINE_SANDBOX: off is refused with TURNLINE_API_KEYS: the in-process runner would run ' +
        "tenants' commands as this server's user, able to read its secrets and other tenants' " +
        'data. Leave it unset (or require), or set TURNLINE_RUNNER_URL to a runner isolated elsewhere.',
    )
  }
  return problems
}

/** How long one storage or coordinator call may keep retrying: set, or min(15 s, half the lease). */
export function ioBudgetMs(env: EnvConfig): number {
  return env.TURNLINE_IO_BUDGET_MS ?? Math.min(15_000, Math.floor(env.TURNLINE_LEASE_MS / 2))
}

/** A network call's deadline: attempts of `attemptMs` (at most the budget) within the budget. */
export function ioDeadline(config: EnvConfig, attemptMs: number): IoDeadline {
  const budgetMs = ioBudgetMs(config)
  return { attemptMs: Math.min(attemptMs, budgetMs), budgetMs }
}

/**
 * A runtime that serves whatever address its platform gives it and cannot hold itself to
 * loopback (`reachableFromAnywhere`: Workers, Lambda, Deno) does not serve without keys: anyone
 * who found its address would run turns on the deployment's model key and read every session.
 * TURNLINE_SINGLE_TENANT asks for an unauthenticated server explicitly (`wrangler dev` on a
 * laptop). Node needs no such setting: it listens only on loopback without keys (crossChecks).
 */
function unauthenticatedProblem(env: EnvConfig): string | undefined {
  if (isMultiTenantEnv(env) || env.TURNLINE_SINGLE_TENANT) return undefined
  return (
    'TURNLINE_API_KEYS: not set, and no key registry (TURNLINE_KEY_REGISTRY): this runtime ' +
    'serves a public address, so it refuses to run unauthenticated. Set TURNLINE_API_KEYS ' +
    '(or TURNLINE_KEY_REGISTRY=1); for a local run only (wrangler dev, deno serve on ' +
    'loopback) set TURNLINE_SINGLE_TENANT=1.'
  )
}

/** Reads and validates the environment record; throws ConfigError listing every problem. */
export function parseEnv(
  env: Readonly<Record<string, string | undefined>>,
  runtime: { reachableFromAnywhere?: boolean } = {},
): EnvConfig {
  const present: Record<string, string> = {}
  for (const name of Object.keys(EnvSchema.shape)) {
    const value = env[name]
    if (typeof value === 'string' && value.trim() !== '') present[name] = value
  }
  const result = EnvSchema.safeParse(present)
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map(
        (issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`,
      ),
    )
  }
  const problems = crossChecks(result.data)
  const unauthenticated = runtime.reachableFromAnywhere && unauthenticatedProblem(result.data)
  if (unauthenticated) problems.push(unauthenticated)
  if (problems.length > 0) throw new ConfigError(problems)
  return result.data
}
