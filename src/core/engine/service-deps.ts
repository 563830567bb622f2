import type { McpServer } from '../../contract/mcp-config.ts'
import type { Admission } from '../../ports/admission.ts'
import type { Ids, TimerClock } from '../../ports/clock.ts'
import type { Coordinator } from '../../ports/coordinator.ts'
import type { McpClient } from '../../ports/mcp-client.ts'
import type { ModelApi, ModelClient } from '../../ports/model-client.ts'
import type { SandboxRunner } from '../../ports/sandbox-runner.ts'
import type { Telemetry } from '../../ports/telemetry.ts'
import type { TokenizerLoader } from '../../ports/tokenizer.ts'
import type { SessionStore } from '../../store/session-store.ts'
import type { QuotaWaitPolicy } from '../background/quota-wait.ts'
import type { CallbackOutbox } from '../callbacks/callback-outbox.ts'
import type { CallbackPolicy } from '../callbacks/callback-policy.ts'

/** Picks the model client for a session's provider settings (one per deployment is typical). */
export type ModelResolver = (tenant: string) => ModelClient

/** How session-defined HTTP tools are called. */
export interface HttpToolPolicy {
  fetch: typeof fetch
  /** Hosts (host or host:port, lowercase) tools may POST to; '*' allows any. */
  allowedHosts: readonly string[]
  /** The tenant's signing secret (HMAC-SHA256 over `<timestamp>.<body>`). */
  secretFor(tenant: string): string
  timeoutMs: number
  /**
   * Bytes of a tool's answer given inline; a longer answer is kept whole as an output artifact
   * of the session and the model gets a preview of it.
   */
  maxResponseBytes: number
  /** Bytes one HTTP or MCP answer may have in all (default 64 MiB); a larger one is refused. */
  maxOutputBytes?: number
  /** Bytes a session's output artifacts may hold in all (default 1 GiB). */
  maxSessionOutputBytes?: number
}

/**
 * What one tenant may hold at once of what the deployment's sweeps walk (docs/limits.md#tenants):
 * scheduled loops (each checked by every schedule pass) and pending background records (each
 * listed by every sweep and run by the shared workers). Counted in the store when a request would
 * add one; what the deployment records on its own — a schedule's firing, a run's next step, a
 * revival — is never refused, so no run stops halfway and no due minute is dropped.
 */
export interface TenantCaps {
  /** Loops with a schedule (TURNLINE_MAX_SCHEDULED_LOOPS). */
  scheduledLoops: number
  /** Background work recorded and not yet run to its outcome (TURNLINE_MAX_PENDING_WORK). */
  pendingWork: number
}

export interface ServiceDefaults {
  /** Model used when a session names none (TURNLINE_MODEL). */
  model?: string
  modelApi: ModelApi
  /** Lease on a session while a turn runs; renewed during long model calls. */
  leaseMs: number
  idempotencyTtlSeconds: number
  /** Wall-clock budget of one invocation for tool waits; longer waits end the turn `waiting`. */
  invocationBudgetMs?: number
  /** How background work refused for the daily quota waits; DEFAULT_QUOTA_WAIT when absent. */
  quotaWait?: QuotaWaitPolicy
  /** What one tenant may hold of scheduled loops and pending work; absent: no cap (tests). */
  tenantCaps?: TenantCaps
}

/**
 * The deployment's sandbox runner: every session's built-in tools (exec_command, write_stdin,
 * read_file, write_file, apply_patch) and its command hooks run there.
 */
export interface SandboxConfig {
  runner: SandboxRunner
  /** `long_running_command_ceiling_seconds` (default 3600). */
  ceilingSeconds?: number
}

/** MCP tool discovery: the client, and the servers every session of the deployment gets. */
export interface McpConfig {
  client: McpClient
  /** TURNLINE_MCP_SERVERS: trusted operator configuration (not host-checked, not stored). */
  servers: readonly McpServer[]
}

/** Everything the session service needs, built by functions/deps.ts from the environment. */
export interface ServiceDeps {
  sessions: SessionStore
  coordinator: Coordinator
  models: ModelResolver
  /** Time and timers (lease renewal, the cancel poll). */
  clock: TimerClock
  ids: Ids
  tools: HttpToolPolicy
  defaults: ServiceDefaults
  /** Without it, sessions have only their HTTP tools and command hooks fail (recorded). */
  sandbox?: SandboxConfig
  /** Without it, sessions cannot name MCP servers (refused at creation). */
  mcp?: McpConfig
  /**
   * Tokenizer for compaction estimates, asked for only when provider usage does not settle the
   * decision. Default: the model's encoding (bpe-tokenizer.ts), loaded on first use from the rank
   * tables every runtime shares.
   * Tests pass a spy or `approximateTokenizer`; a deployment never should, since a count that
   * differs by runtime makes a session compact differently by where its turns run.
   */
  tokenizer?: TokenizerLoader
  /** Structured log sink (maintenance failures, warnings); defaults to JSON lines on stderr (service-log.ts). */
  log?: (entry: Record<string, unknown>) => void
  /**
   * Per-tenant quotas and turn slots (src/ports/admission.ts): every turn step is admitted
   * (`engine/admit-step.ts`) and every model call reserved and settled
   * (`model/admitted-model.ts`), whoever started it — a request, a runner callback, a loop, a
   * webhook. Without it nothing is limited or counted.
   */
  admission?: Admission
  /**
   * Spans of tool calls and compactions (src/ports/telemetry.ts; docs/observability.md).
   * Absent: `noTelemetry`, nothing recorded.
   */
  telemetry?: Telemetry
  /**
   * Completion callbacks (callbacks/): where their notices are recorded and how they are
   * delivered. Without it no session's callback is recorded.
   */
  callbacks?: { outbox: CallbackOutbox; policy: CallbackPolicy }
}
