/**
 * What bench/turn-latency.ts and bench/turn-overhead.ts share: a model that answers at once, the
 * production engine on the given store and coordinator, and the loop that times ordinary turns
 * and counts what each one costs. With an instant model a turn's time is all engine overhead.
 */
import type { ServiceDeps } from '../../src/core/engine/service-deps.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import type { ModelClient } from '../../src/ports/model-client.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { randomIds } from '../../src/shared/random-ids.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { SessionStore } from '../../src/store/session-store.ts'

/** Streams `deltas` and completes at once with their text and realistic usage. */
export function instantModel(deltas: readonly string[], outputTokens: number): ModelClient {
  const text = deltas.join('')
  return {
    async *stream() {
      for (const delta of deltas) yield { type: 'text_delta', text: delta }
      yield {
        type: 'completed',
        response: {
          text,
          toolCalls: [],
          usage: {
            input_tokens: 1500,
            cached_input_tokens: 1000,
            cache_creation_tokens: 0,
            output_tokens: outputTokens,
          },
          stopReason: 'stop',
        },
      }
    },
  }
}

/** The engine as deployed, on `store` and `coordinator`, without tools or retention sweeps. */
export function benchService(
  store: ObjectStore,
  coordinator: Coordinator,
  model: ModelClient,
): SessionService {
  const deps: ServiceDeps = {
    sessions: new SessionStore({ store }),
    coordinator,
    models: () => model,
    clock: systemClock,
    ids: randomIds,
    tools: { fetch, allowedHosts: [], secretFor: () => 'x', timeoutMs: 1000, maxResponseBytes: 1 },
    defaults: {
      model: 'gpt-4o-mini',
      modelApi: 'chat',
      leaseMs: 30_000,
      idempotencyTtlSeconds: 86_400,
    },
    log: () => {},
  }
  return new SessionService(deps, { retentionEvery: 1_000_000 })
}

export interface TurnSample<K extends string> {
  /** The turn's index in its session, from 0. */
  turn: number
  ms: number
  /** How much each counter grew during the turn. */
  counts: Record<K, number>
}

/**
 * Runs `turns` turns (each with its idempotency key) in each of `sessions` new sessions of
 * tenant `bench`, reading every counter before and after each turn.
 */
export async function measureTurns<K extends string>(
  service: SessionService,
  options: { sessions: number; turns: number; counters: Record<K, () => number> },
  onTurn: (sample: TurnSample<K>) => void,
): Promise<void> {
  const names = Object.keys(options.counters) as K[]
  const read = () => names.map((name) => options.counters[name]())
  for (let s = 0; s < options.sessions; s++) {
    const { session_id } = await service.createSession('bench', { workspace: 'ws' })
    for (let turn = 0; turn < options.turns; turn++) {
      const before = read()
      const t0 = performance.now()
      await service.stepTurn(
        'bench',
        session_id,
        { input: `step ${turn}` },
        { idempotencyKey: `${session_id}-${turn}` },
      )
      const ms = performance.now() - t0
      const after = read()
      const counts = Object.fromEntries(
        names.map((name, i) => [name, (after[i] ?? 0) - (before[i] ?? 0)]),
      ) as Record<K, number>
      onTurn({ turn, ms, counts })
    }
  }
}
