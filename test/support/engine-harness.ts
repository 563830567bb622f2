import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { createOpenAIModelClient } from '../../adapters/openai/openai-model-client.ts'
import { createApp } from '../../functions/app.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { type EngineOptions, engineDeps, TOOL_SECRET } from './engine-deps.ts'
import { serveApp } from './http-server.ts'
import { startMockOpenAI } from './mock-openai.ts'
import { startToolReceiver } from './tool-receiver.ts'

export { echoTool, TOOL_SECRET } from './engine-deps.ts'

/**
 * The real turn engine on the given (default: memory) adapters, the mock OpenAI server behind
 * the real OpenAI adapter, and a signature-checking tool receiver.
 */
export async function startEngine(options: Partial<EngineOptions> = {}) {
  const mock = await startMockOpenAI()
  const receiver = await startToolReceiver(TOOL_SECRET)
  const store = options.store ?? new MemoryObjectStore()
  const model = createOpenAIModelClient({ baseURL: mock.baseURL, apiKey: 'test', maxRetries: 0 })
  const logs: Record<string, unknown>[] = []
  const deps = engineDeps({ ...options, store, model, fetch: (...args) => fetch(...args) }, logs)
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

/** {@link startEngine} behind the real Hono app over HTTP, with one API key for `tenant`. */
export async function startEngineServer(key: string, tenant: string) {
  const engine = await startEngine()
  const server = await serveApp(
    createApp({ api: engine.service, auth: { keys: [{ key, tenant }] }, log: () => {} }),
  )
  return {
    engine,
    server,
    async close() {
      await server.close()
      await engine.close()
    },
  }
}
