import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { createOpenAIModelClient } from '../../adapters/openai/openai-model-client.ts'
import type { ServiceDefaults, ServiceDeps } from '../../src/core/engine/service-deps.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { randomIds, systemClock } from '../../src/ports/clock.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import type { ModelClient } from '../../src/ports/model-client.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore, type SessionStoreOptions } from '../../src/store/session-store.ts'
import { startMockOpenAI } from './mock-openai.ts'
import { startToolReceiver } from './tool-receiver.ts'

export const TOOL_SECRET = 'test-tool-secret'

/**
 * The real turn engine on the given (default: memory) adapters, the mock OpenAI server behind
 * the real OpenAI adapter, and a signature-checking tool receiver.
 */
export async function startEngine(
  options: {
    store?: ObjectStore
    coordinator?: Coordinator
    defaults?: Partial<ServiceDefaults>
    /** Session-store settings, e.g. `checkpointEvery: 1` to write the manifest every turn. */
    sessions?: Omit<SessionStoreOptions, 'store'>
  } = {},
) {
  const mock = await startMockOpenAI()
  const receiver = await startToolReceiver(TOOL_SECRET)
  const store = options.store ?? new MemoryObjectStore()
  const model = createOpenAIModelClient({ baseURL: mock.baseURL, apiKey: 'test', maxRetries: 0 })
  const logs: Record<string, unknown>[] = []
  const deps = memoryEngineDeps({
    store,
    coordinator: options.coordinator ?? new MemoryCoordinator(),
    model,
    defaults: { model: 'gpt-4o-mini', ...options.defaults },
    sessions: options.sessions,
    log: (entry) => logs.push(entry),
  })
  const service = new SessionService(deps)
  return {
    service,
    deps,
    mock,
    receiver,
    store,
    logs,
    async close() {
      await mock.close()
      await receiver.close()
    },
  }
}

/** The engine's deps on the given store and coordinator, with one model client for every tenant. */
export function memoryEngineDeps(input: {
  store: ObjectStore
  coordinator: Coordinator
  model: ModelClient
  defaults?: Partial<ServiceDefaults>
  sessions?: Omit<SessionStoreOptions, 'store'> | undefined
  log?: ServiceDeps['log']
}): ServiceDeps {
  return {
    sessions: new SessionStore({ ...input.sessions, store: input.store }),
    coordinator: input.coordinator,
    models: () => input.model,
    clock: systemClock,
    ids: randomIds,
    tools: {
      fetch: (...args) => fetch(...args),
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
      ...input.defaults,
    },
    log: input.log ?? (() => undefined),
  }
}

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
