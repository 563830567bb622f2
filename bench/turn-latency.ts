/**
 * Turn latency as S3 and Upstash users see it: the same engine as production, on S3 (moto_server)
 * and a Redis coordinator, each behind a loopback proxy that adds a realistic round-trip time
 * (bench/support/delay-proxy.ts), with a model that answers at once. So a turn's time is its
 * storage and coordination overhead, and the count of sequential round trips shows.
 *
 *   npx tsx bench/turn-latency.ts [--rtt 0,15] [--sessions 20] [--turns 10]
 *       [--coordinator upstash,redis-tcp]
 * (`npm run services:start` first.) Prints, per RTT and coordinator: turn latency p50/p99, object
 * requests and coordinator round trips per turn, and the overhead in RTTs. Targets (from the
 * deploy issue): ≤ 3 object requests and ≤ 2 coordinator round trips per ordinary turn, and a
 * per-turn overhead ≤ 3 × RTT. Figures, not pass/fail.
 */
import { parseArgs } from 'node:util'
import { countingObjectStore } from '../adapters/memory/counting-object-store.ts'
import { RedisTcpCoordinator } from '../adapters/redis-tcp/redis-tcp-coordinator.ts'
import { S3ObjectStore } from '../adapters/s3/s3-object-store.ts'
import { UpstashCoordinator } from '../adapters/upstash/upstash-coordinator.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import { requireServices } from '../test/support/services.ts'
import { createTestBucket } from '../test/support/test-bucket.ts'
import { startUpstashProxy } from '../test/support/upstash-proxy.ts'
import { startDelayProxy, startHttpDelayProxy } from './support/delay-proxy.ts'
import { benchService, instantModel, measureTurns } from './support/instant-turns.ts'
import { median, percentile } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    rtt: { type: 'string', default: '0,15' },
    sessions: { type: 'string', default: '20' },
    turns: { type: 'string', default: '10' },
    coordinator: { type: 'string', default: 'upstash,redis-tcp' },
  },
})
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)

const model = instantModel(['Done.'], 2)

const hostPort = (url: string) => {
  const u = new URL(url)
  return { host: u.hostname, port: Number(u.port) }
}

interface Measured {
  latencies: number[]
  objectRequests: number
  /** S3 requests as the delaying proxy saw them (SDK retries included). */
  wireRequests: number
  coordinatorTrips: number
  turns: number
}

async function measure(
  store: S3ObjectStore,
  coordinator: Coordinator,
  trips: () => number,
  wire: () => number,
): Promise<Measured> {
  const counted = countingObjectStore(store)
  const service = benchService(counted.store, coordinator, model)
  const result: Measured = {
    latencies: [],
    objectRequests: 0,
    wireRequests: 0,
    coordinatorTrips: 0,
    turns: 0,
  }
  const objectRequests = () => {
    const { get, put, list, delete: deletes } = counted.snapshot()
    return get + put + list + deletes
  }
  await measureTurns(
    service,
    { sessions: SESSIONS, turns: TURNS, counters: { objectRequests, trips, wire } },
    ({ turn, ms, counts }) => {
      // The first turn of a session pays a cold read; an ordinary turn is the warm one.
      if (turn === 0) return
      result.latencies.push(ms)
      result.objectRequests += counts.objectRequests
      result.coordinatorTrips += counts.trips
      result.wireRequests += counts.wire
      result.turns += 1
    },
  )
  return result
}

async function run(rtt: number, kind: string) {
  const services = requireServices()
  const bucket = await createTestBucket(services.s3, 'latency')
  const s3Proxy = await startHttpDelayProxy(services.s3.endpoint, rtt)
  const store = new S3ObjectStore({
    bucket: bucket.bucket,
    prefix: 'bench',
    region: services.s3.region,
    endpoint: s3Proxy.url,
    forcePathStyle: true,
    credentials: {
      accessKeyId: services.s3.accessKeyId,
      secretAccessKey: services.s3.secretAccessKey,
    },
  })
  const namespace = `bench-latency-${Date.now()}:`
  const closers: (() => Promise<unknown>)[] = [() => s3Proxy.close()]
  let coordinator: Coordinator
  let trips: () => number
  if (kind === 'upstash') {
    const rest = await startUpstashProxy({ redisUrl: services.redisUrl })
    const delayed = await startHttpDelayProxy(rest.url, rtt)
    const c = new UpstashCoordinator({ url: delayed.url, token: rest.token, namespace })
    closers.push(
      () => delayed.close(),
      () => rest.close(),
    )
    coordinator = c
    trips = () => delayed.requests
  } else if (kind === 'redis-tcp') {
    const delayed = await startDelayProxy(hostPort(services.redisUrl), rtt)
    const c = new RedisTcpCoordinator({ url: `redis://${delayed.host}`, namespace })
    closers.push(
      () => c.close(),
      () => delayed.close(),
    )
    coordinator = c
    trips = () => c.requestCount
  } else {
    throw new Error(`unknown coordinator ${kind} (upstash, redis-tcp)`)
  }
  try {
    const m = await measure(store, coordinator, trips, () => s3Proxy.requests)
    const p50 = median(m.latencies)
    const p99 = percentile(m.latencies, 99)
    const perTurn = (n: number) => (n / m.turns).toFixed(2)
    console.log(
      `RTT ${String(rtt).padStart(2)} ms  S3 + ${kind.padEnd(9)}  turn p50 ${p50.toFixed(1).padStart(6)} ms  ` +
        `p99 ${p99.toFixed(1).padStart(6)} ms  object requests/turn ${perTurn(m.objectRequests)} ` +
        `(on the wire ${perTurn(m.wireRequests)}; ≤ 3)  coordinator trips/turn ${perTurn(m.coordinatorTrips)} (≤ 2)`,
    )
    return p50
  } finally {
    for (const close of closers) await close()
    await bucket.destroy()
  }
}

const rtts = values.rtt.split(',').map(Number)
console.log(
  `${SESSIONS} sessions × ${TURNS} turns (the first turn of each session, a cold read, not counted); ` +
    'instant model, so a turn is all overhead',
)
for (const kind of values.coordinator.split(',')) {
  const p50s = new Map<number, number>()
  for (const rtt of rtts) p50s.set(rtt, await run(rtt, kind))
  const base = p50s.get(0)
  if (base === undefined) continue
  for (const rtt of rtts.filter((r) => r > 0)) {
    const added = (p50s.get(rtt) ?? Number.NaN) - base
    console.log(
      `  ${kind}: the ${rtt} ms RTT adds ${added.toFixed(1)} ms to the p50 turn = ` +
        `${(added / rtt).toFixed(2)} × RTT (target ≤ 3 × RTT)`,
    )
  }
}
