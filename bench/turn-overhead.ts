/**
 * Turn-engine overhead: S sessions × T turns against a zero-latency in-process model, so what
 * is measured is the engine (rehydrate, lease, commit, coordinator) and its storage. Prints the
 * per-turn overhead (p50, p99), object requests and coordinator round trips per turn, and the
 * overhead at turn T vs turn 1. Figures, not pass/fail.
 *
 *   npx tsx bench/turn-overhead.ts [--sessions 200] [--turns 20] [--backends memory,real]
 * `real` = S3 on moto_server + Upstash coordinator via the REST proxy on redis-server
 * (`npm run services:start` first).
 */
import { parseArgs } from 'node:util'
import { countingObjectStore } from '../adapters/memory/counting-object-store.ts'
import { MemoryCoordinator } from '../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../adapters/memory/memory-object-store.ts'
import { UpstashCoordinator } from '../adapters/upstash/upstash-coordinator.ts'
import type { ServiceDeps } from '../src/core/engine/service-deps.ts'
import { SessionService } from '../src/core/session-service.ts'
import { randomIds, systemClock } from '../src/ports/clock.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { ModelClient } from '../src/ports/model-client.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { SessionStore } from '../src/store/session-store.ts'
import { requireServices } from '../test/support/services.ts'
import { createTestBucket } from '../test/support/test-bucket.ts'
import { startUpstashProxy } from '../test/support/upstash-proxy.ts'
import { median, percentile } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '200' },
    turns: { type: 'string', default: '20' },
    backends: { type: 'string', default: 'memory,real' },
  },
})
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)

/** Answers at once with a short text and realistic usage. */
const instantModel: ModelClient = {
  async *stream() {
    yield { type: 'text_delta', text: 'Done: ' }
    yield { type: 'text_delta', text: 'the change is in place.' }
    yield {
      type: 'completed',
      response: {
        text: 'Done: the change is in place.',
        toolCalls: [],
        usage: {
          input_tokens: 1500,
          cached_input_tokens: 1000,
          cache_creation_tokens: 0,
          output_tokens: 12,
        },
        stopReason: 'stop',
      },
    }
  },
}

async function run(
  name: string,
  base: ObjectStore,
  coordinator: Coordinator,
  roundTrips: () => number,
) {
  const counted = countingObjectStore(base)
  const deps: ServiceDeps = {
    sessions: new SessionStore({ store: counted.store }),
    coordinator,
    models: () => instantModel,
    clock: systemClock,
    ids: randomIds,
    tools: {
      fetch,
      allowedHosts: [],
      secretFor: () => 'x',
      timeoutMs: 1000,
      maxResponseBytes: 65536,
    },
    defaults: {
      model: 'gpt-4o-mini',
      modelApi: 'chat',
      leaseMs: 30_000,
      idempotencyTtlSeconds: 86_400,
    },
    log: () => {},
  }
  const service = new SessionService(deps, { retentionEvery: 1_000_000 })
  const all: number[] = []
  const byTurn: number[][] = Array.from({ length: TURNS }, () => [])
  let requests = 0
  let trips = 0
  for (let s = 0; s < SESSIONS; s++) {
    const { session_id } = await service.createSession('bench', { workspace: 'ws' })
    for (let t = 0; t < TURNS; t++) {
      const before = counted.snapshot()
      const tripsBefore = roundTrips()
      const t0 = performance.now()
      await service.stepTurn(
        'bench',
        session_id,
        { input: `step ${t}` },
        { idempotencyKey: `${session_id}-${t}` },
      )
      const ms = performance.now() - t0
      const after = counted.snapshot()
      requests += after.get + after.put + after.list - (before.get + before.put + before.list)
      trips += roundTrips() - tripsBefore
      all.push(ms)
      byTurn[t]?.push(ms)
    }
  }
  const n = SESSIONS * TURNS
  const first = median(byTurn[0] ?? [])
  const last = median(byTurn[TURNS - 1] ?? [])
  console.log(`\n${name}: ${SESSIONS} sessions × ${TURNS} turns`)
  console.log(
    `  overhead per turn: p50 ${median(all).toFixed(2)} ms, p99 ${percentile(all, 99).toFixed(2)} ms`,
  )
  console.log(
    `  object requests per turn: ${(requests / n).toFixed(2)} (target ≤ 3); coordinator round trips per turn: ${(trips / n).toFixed(2)} (target ≤ 2)`,
  )
  console.log(
    `  turn ${TURNS} vs turn 1 (medians): ${last.toFixed(2)} / ${first.toFixed(2)} ms = ${(last / first).toFixed(2)}× (target ≤ 1.2)`,
  )
}

for (const backend of values.backends.split(',')) {
  if (backend === 'memory') {
    await run('memory adapters', new MemoryObjectStore(), new MemoryCoordinator(), () => 0)
  } else if (backend === 'real') {
    const services = requireServices()
    const bucket = await createTestBucket(services.s3, 'overhead')
    const proxy = await startUpstashProxy({ redisUrl: services.redisUrl })
    const coordinator = new UpstashCoordinator({
      url: proxy.url,
      token: proxy.token,
      namespace: `bench-${Date.now()}:`,
    })
    try {
      await run(
        'S3 (moto) + Upstash (redis-server)',
        bucket.store('bench'),
        coordinator,
        () => coordinator.requestCount,
      )
    } finally {
      await proxy.close()
      await bucket.destroy()
    }
  } else {
    throw new Error(`unknown backend ${backend}`)
  }
}
