import type { Clock, Ids } from '../ports/clock.ts'
import type { Coordinator } from '../ports/coordinator.ts'
import type { ModelClient } from '../ports/model-client.ts'
import type { SandboxRunner } from '../ports/sandbox-runner.ts'
import type { SessionRef } from '../store/session-ref.ts'
import type { SessionStore } from '../store/session-store.ts'
import type { TokenizerLoader } from './compaction-meter.ts'
import type { HookCommandRunner } from './hooks/command-hook.ts'
import type { SandboxPlacement } from './placed-runner.ts'
import type { ToolHandler } from './tool-handler.ts'

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
  /** Response bytes kept; the rest is cut with a notice. */
  maxResponseBytes: number
}

export interface ServiceDefaults {
  /** Model used when a session names none (TURNLINE_MODEL). */
  model?: string
  modelApi: 'chat' | 'responses'
  /** Lease on a session while a turn runs; renewed during long model calls. */
  leaseMs: number
  idempotencyTtlSeconds: number
  /** Wall-clock budget of one invocation for tool waits; longer waits end the turn `waiting`. */
  invocationBudgetMs?: number
}

/** The sandbox: built-in tools (exec, files) per session and the runner for command hooks. */
export interface SandboxDeps {
  /** The built-in tools; with a placement they work inside that folder of that workspace. */
  tools(ref: SessionRef, placement?: SandboxPlacement): ToolHandler[]
  /** A git worktree of `ref`'s workspace for a sub-agent (`isolation: "worktree"`). */
  isolate?(ref: SessionRef, name: string): Promise<SandboxPlacement>
  runCommand?: (ref: SessionRef) => HookCommandRunner
  /** The session's workspace path as hooks and tools see it. */
  workspacePath(ref: SessionRef): string
  /** The runner itself (the orient phase's git log, the verifier's placement). */
  runner?: SandboxRunner
}

/** Everything the session service needs, built by functions/deps.ts from the environment. */
export interface ServiceDeps {
  sessions: SessionStore
  coordinator: Coordinator
  models: ModelResolver
  clock: Clock
  ids: Ids
  tools: HttpToolPolicy
  defaults: ServiceDefaults
  /** Without it, sessions have only their HTTP tools and command hooks fail (recorded). */
  sandbox?: SandboxDeps
  /**
   * Tokenizer for compaction estimates, asked for only when provider usage does not settle the
   * decision. Default: gpt-tokenizer's encoding of the model, imported on first use; a Worker
   * passes `approximateTokenizer` (a length heuristic) to keep the rank tables out of its bundle.
   */
  tokenizer?: TokenizerLoader
  /** Structured log sink (maintenance failures, warnings); defaults to console.warn. */
  log?: (entry: Record<string, unknown>) => void
}
