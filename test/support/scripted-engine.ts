import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { type EngineOptions, engineDeps, TOOL_SECRET } from './engine-deps.ts'
import type { InProcessHookReceiver } from './hook-receiver.ts'
import { ScriptedModelClient } from './scripted-model.ts'
import { type InProcessToolReceiver, inProcessToolReceiver } from './tool-receiver.ts'

/**
 * The real turn engine in one process, for the unit tier: memory adapters (unless given), the
 * scripted model (`ScriptedModelClient`) and session HTTP tools answered in-process. No socket,
 * no server: a whole turn runs in milliseconds.
 */
export function startScriptedEngine(
  options: Partial<EngineOptions> & {
    /** The tool endpoint to call (another engine's: one endpoint for several "processes"). */
    receiver?: InProcessToolReceiver
    /** HTTP hooks answered in-process too (hooks share the tools' HTTP policy and fetch). */
    hooks?: InProcessHookReceiver
  } = {},
) {
  const model = new ScriptedModelClient()
  const receiver = options.receiver ?? inProcessToolReceiver(TOOL_SECRET)
  const store = options.store ?? new MemoryObjectStore()
  const logs: Record<string, unknown>[] = []
  const { hooks } = options
  const fetch: typeof globalThis.fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input)
    return hooks && url.startsWith(`${hooks.origin}/`)
      ? hooks.fetch(input, init)
      : receiver.fetch(input, init)
  }
  const deps = engineDeps({ ...options, store, model, fetch }, logs)
  return {
    service: new SessionService(deps),
    deps,
    model,
    receiver,
    store,
    logs,
    /** Nothing to release in one process: the shape of `startEngine`'s, for tests of both tiers. */
    close: async (): Promise<void> => {},
  }
}

export type ScriptedEngine = ReturnType<typeof startScriptedEngine>

/**
 * A scripted engine for the tests of one file: the model forgets its script and requests, the
 * tool receiver its calls and the hook receiver (if any) its deliveries and reply before each
 * test, and after each test the model must have been
 * asked for every step it was given and for nothing else (`assertDone`, automatic).
 */
export function useScriptedEngine(options?: Parameters<typeof startScriptedEngine>[0]): {
  readonly engine: ScriptedEngine
} {
  let engine: ScriptedEngine | undefined
  beforeAll(() => {
    engine = startScriptedEngine(options)
  })
  beforeEach(() => {
    engine?.model.reset()
    if (engine) engine.receiver.calls.length = 0
    if (options?.hooks) {
      options.hooks.received.length = 0
      options.hooks.setReply(() => ({ body: '{}' }))
    }
  })
  afterEach(() => {
    engine?.model.assertDone()
  })
  afterAll(() => {
    engine = undefined
  })
  return {
    get engine() {
      if (!engine) throw new Error('the engine is not started yet (beforeAll)')
      return engine
    },
  }
}
