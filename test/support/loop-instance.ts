import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { type EngineOptions, engineDeps } from './engine-deps.ts'
import { ScriptedModelClient } from './scripted-model.ts'

/**
 * One instance of a deployment for the loop sweeps' tests: the real engine on the store, clock
 * and coordinator given (instances built on the same ones share a deployment), a model whose
 * script is empty and HTTP tools that answer `{}`.
 */
export function loopInstance(options: EngineOptions): SessionService {
  const fetchImpl = (async () => new Response('{}')) as unknown as typeof fetch
  const model = new ScriptedModelClient()
  const coordinator = options.coordinator ?? new MemoryCoordinator()
  return new SessionService(engineDeps({ ...options, coordinator, model, fetch: fetchImpl }, []))
}

/** A loop of one step a run, scheduled at every minute. */
export const everyMinute = (loopId: string) => ({
  loop_id: loopId,
  task: 'Tidy one file.',
  schedule: { cron: '* * * * *' },
  budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 1 },
})
