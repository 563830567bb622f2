import type { Clock, Ids } from '../ports/clock.ts'
import type { Coordinator } from '../ports/coordinator.ts'
import type { ModelClient } from '../ports/model-client.ts'
import type { SessionStore } from '../store/session-store.ts'

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
  /** Structured log sink (maintenance failures, warnings); defaults to console.warn. */
  log?: (entry: Record<string, unknown>) => void
}
