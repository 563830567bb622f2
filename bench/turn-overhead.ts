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
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { requireServices } from '../test/support/services.ts'
import { createTestBucket } from '../test/support/test-bucket.ts'
import { startUpstashProxy } from '../test/support/upstash-proxy.ts'
import { benchService, instantModel, measureTurns } from './support/instant-turns.ts'
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

const model = instantModel(['Done: ', 'the change is in place.'], 12)

async function run(
  name: string,
  base: ObjectStore,
  coordinator: Coordinator,
  roundTrips: () => number,
) {
  const counted = countingObjectStore(base)
  const service = benchService(counted.store, coordinator, model)
  const all: number[] = []
  const byTurn: number[][] = Array.from({ length: TURNS }, () => [])
  let requests = 0
  let trips = 0
  const objectRequests = () => {
    const { get, put, list } = counted.snapshot()
    return get + put + list
  }
  await measureTurns(
    service,
    { sessions: SESSIONS, turns: TURNS, counters: { objectRequests, roundTrips } },
    ({ turn, ms, counts }) => {
      requests += counts.objectRequests
      trips += counts.roundTrips
      all.push(ms)
      byTurn[turn]?.push(ms)
    },
  )
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
