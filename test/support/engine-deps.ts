import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import type { ServiceDefaults, ServiceDeps } from '../../src/core/engine/service-deps.ts'
import type { Admission } from '../../src/ports/admission.ts'
import type { TimerClock } from '../../src/ports/clock.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import type { ModelClient } from '../../src/ports/model-client.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { randomIds } from '../../src/shared/random-ids.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { SessionStore, type SessionStoreOptions } from '../../src/store/session-store.ts'

export const TOOL_SECRET = 'test-tool-secret'

/** What the test engines vary: the store, coordinator, clock and the engine's settings. */
export interface EngineOptions {
  store: ObjectStore
  coordinator?: Coordinator
  defaults?: Partial<ServiceDefaults>
  /** Session-store settings, e.g. `checkpointEvery: 1` to write the manifest every turn. */
  sessions?: Omit<SessionStoreOptions, 'store'>
  clock?: TimerClock
  /** The deployment's per-tenant limits (none when absent). */
  admission?: Admission
}

/** The engine's ports for a test: one model client, HTTP tools on loopback, logs collected. */
export function engineDeps(
  options: EngineOptions & { model: ModelClient; fetch: typeof fetch },
  logs: Record<string, unknown>[],
): ServiceDeps {
  const { model, store } = options
  return {
    sessions: new SessionStore({ ...options.sessions, store }),
    coordinator: options.coordinator ?? new MemoryCoordinator(),
    models: () => model,
    clock: options.clock ?? systemClock,
    ids: randomIds,
    tools: {
      fetch: options.fetch,
      allowedHosts: ['127.0.0.1'],
      secretFor: () => TOOL_SECRET,
      timeoutMs: 2000,
      maxResponseBytes: 64 * 1024,
    },
    defaults: {
      model: 'gpt-4o-mini',
      modelApi: 'chat',
      leaseMs: 30_000,
      idempotencyTtlSeconds: 86_400,
      ...options.defaults,
    },
    log: (entry) => logs.push(entry),
    ...(options.admission ? { admission: options.admission } : {}),
  }
}

/** A session HTTP tool `lookup` at `url` (the tool receiver echoes its arguments). */
export const echoTool = (url: string) => ({
  type: 'http' as const,
  name: 'lookup',
  description: 'Look a thing up',
  parameters: {
    type: 'object',
    properties: { q: { type: 'string' } },
    required: ['q'],
    additionalProperties: false,
  },
  url,
})
