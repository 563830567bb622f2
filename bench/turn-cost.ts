/**
 * Per-turn cost of the engine next to a raw loop, in one process and interleaved rounds.
 *
 * Workload: S sessions × T turns; each turn is one tool call then an answer, i.e. two streamed
 * Chat Completions requests to a zero-latency mock of the OpenAI API (the test suite's Hono mock)
 * and one call of a session HTTP tool (`lookup`, POSTed signed to the test suite's receiver on
 * loopback); state is durable after every step. Variants:
 *
 *   raw     the baseline written here: fetch the mock, POST the tool, append a JSON-lines file
 *           with fsync after each model response (bench/support/raw-loop.ts)
 *   memory  Turnline in-process (SessionService) on the memory adapters
 *   fs      Turnline in-process on the fs store (durable: fsync)
 *   http    Turnline over HTTP (the Hono app on loopback) on the fs store
 *   s3      Turnline in-process on S3 (moto_server) + Upstash (redis-server through the REST
 *           proxy); needs `npm run services:start`. Not in the default set.
 *   traced  `memory` with tracing on, exported to a sink on loopback (bench/support/traced-variant.ts);
 *           beside `memory` it is what tracing costs when on. Not in the default set.
 *   engine  the engine alone: memory adapters, an in-process model that streams what the mock
 *           streams, an in-process tool (bench/support/engine-alone.ts); no sockets, so its
 *           figures are the engine's own work. Not in the default set; its ratio to the
 *           baseline is not a like-for-like comparison.
 *
 * Every round runs every variant; within a round, sessions are interleaved (session i of each
 * variant, in an order rotated per round), so a noisy neighbour hits all variants alike. Prints,
 * per variant, the medians over rounds of: mean, p50 and p99 ms per turn, turn T ÷ turn 1, the
 * ratio to the baseline of the same round, CPU ms per turn (the whole process: engine, mock,
 * receiver; far less sensitive to a busy machine than wall time), bytes kept per session, object
 * requests, coordinator round trips and fsyncs per turn. Figures, not pass/fail.
 *
 * `--before <git revision>[,<revision>…]` also runs every Turnline variant from each of those
 * revisions (extracted with `git archive` into a temporary folder), so changes are measured
 * against their parents in the same interleaved run, each against the same round's baseline.
 *
 * `--tool-calls 0` makes every turn a plain answer (one model request, no tool): what an ordinary
 * turn without tools costs (revisions given with `--before` need this option too).
 *
 *   npm run bench:turn-cost -- [--sessions 50] [--turns 20] [--rounds 3] [--warmup 2]
 *                              [--variants raw,memory,fs,http] [--before HEAD~1] [--dir .tmp/bench]
 *                              [--tool-calls 1]
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { requireServices } from '../test/support/services.ts'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { benchDataDir } from './support/bench-data-dir.ts'
import { engineAloneVariant } from './support/engine-alone.ts'
import { countWriterThreadsOf, fsyncCount, installFsyncCounter } from './support/fsync-counter.ts'
import { rawVariant } from './support/raw-loop.ts'
import { tracedVariant } from './support/traced-variant.ts'
import {
  type RoundSample,
  type RoundStats,
  report,
  roundMeans,
  roundStats,
  turnProfile,
} from './support/turn-cost-report.ts'
import { type Scenario, startScenario } from './support/turn-cost-scenario.ts'
import {
  fsVariant,
  httpVariant,
  memoryVariant,
  s3Variant,
  type Variant,
} from './support/turnline-variants.ts'

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '50' },
    turns: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    variants: { type: 'string', default: 'raw,memory,fs,http' },
    dir: { type: 'string', default: benchDataDir() },
    warmup: { type: 'string', default: '2' },
    before: { type: 'string' },
    'tool-calls': { type: 'string', default: '1' },
  },
})
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)
const ROUNDS = Number(values.rounds)
const WARMUP = Number(values.warmup)

type Builder = (scenario: Scenario, dir: string) => Variant | Promise<Variant>

const here = join(import.meta.dirname, '..')

const BUILDERS: Record<string, Builder> = {
  raw: rawVariant,
  engine: (scenario) => engineAloneVariant(here, undefined, scenario.callsTool),
  memory: memoryVariant,
  fs: fsVariant,
  http: httpVariant,
  s3: s3Variant,
  traced: tracedVariant,
}
/** The export of bench/support/turnline-variants.ts behind each Turnline variant. */
const EXPORTS: Record<string, string> = {
  memory: 'memoryVariant',
  fs: 'fsVariant',
  http: 'httpVariant',
  s3: 's3Variant',
}

/** The same variant built from the earlier revision's own code. */
async function beforeBuilder(tree: BeforeTree, key: string): Promise<Builder | undefined> {
  if (key === 'engine') {
    return (scenario) => engineAloneVariant(tree.root, tree.label, scenario.callsTool)
  }
  const name = EXPORTS[key]
  if (!name) return undefined
  await countWriterThreadsOf(tree.root)
  const module = (await import(join(tree.root, 'bench/support/turnline-variants.ts'))) as Record<
    string,
    Builder | undefined
  >
  const build = module[name]
  if (!build) throw new Error(`${tree.label} has no ${name} in bench/support/turnline-variants.ts`)
  return async (scenario, dir) => {
    const variant = await build(scenario, dir)
    return { ...variant, name: `${variant.name} [${tree.label}]` }
  }
}

/** Runs one session of T turns, timing each turn and counting what it cost. */
async function runSession(variant: Variant, index: number, sample: RoundSample | undefined) {
  const session = await variant.newSession(index)
  for (let t = 0; t < TURNS; t++) {
    const requests = variant.objectRequests()
    const kinds = variant.objectCounts?.()
    const trips = variant.coordinatorTrips()
    const syncs = fsyncCount()
    const cpu = process.cpuUsage()
    const started = performance.now()
    await session.turn(`step ${t + 1}`, `turn-${index}-${t}`)
    const ms = performance.now() - started
    const used = process.cpuUsage(cpu)
    if (!sample) continue
    sample.cpu.push((used.user + used.system) / 1000)
    sample.times.push(ms)
    sample.byTurn[t]?.push(ms)
    sample.turns += 1
    sample.fsyncs += fsyncCount() - syncs
    sample.fsyncsEach.push(fsyncCount() - syncs)
    const requestsAfter = variant.objectRequests()
    if (requests !== undefined && requestsAfter !== undefined) {
      sample.objectRequests = (sample.objectRequests ?? 0) + requestsAfter - requests
      sample.requestsEach.push(requestsAfter - requests)
    }
    const kindsAfter = variant.objectCounts?.()
    if (kinds && kindsAfter) {
      const add = sample.objectKinds ?? [0, 0, 0, 0]
      sample.objectKinds = [
        add[0] + kindsAfter.get - kinds.get,
        add[1] + kindsAfter.put - kinds.put,
        add[2] + (kindsAfter.append ?? 0) - (kinds.append ?? 0),
        add[3] + kindsAfter.list - kinds.list,
      ]
    }
    const tripsAfter = variant.coordinatorTrips()
    if (trips !== undefined && tripsAfter !== undefined) {
      sample.coordinatorTrips = (sample.coordinatorTrips ?? 0) + tripsAfter - trips
    }
  }
  sample?.bytesPerSession.push(await session.bytes())
}

const emptySample = (): RoundSample => ({
  times: [],
  cpu: [],
  byTurn: Array.from({ length: TURNS }, () => []),
  bytesPerSession: [],
  turns: 0,
  objectRequests: undefined,
  objectKinds: undefined,
  coordinatorTrips: undefined,
  fsyncs: 0,
  requestsEach: [],
  fsyncsEach: [],
})

const root = await mkdtemp(join(values.dir, 'turn-cost-'))
await installFsyncCounter(root)
const TOOL_CALLS = values['tool-calls'] !== '0'
const scenario = await startScenario({ callsTool: TOOL_CALLS })
const variants: Variant[] = []
const trees: BeforeTree[] = []
if (values.variants.split(',').includes('s3')) {
  // Earlier revisions look for the services in their own checkout: hand them over by env.
  const services = requireServices()
  process.env.TURNLINE_TEST_S3_ENDPOINT = services.s3.endpoint
  process.env.TURNLINE_TEST_S3_REGION = services.s3.region
  process.env.TURNLINE_TEST_S3_ACCESS_KEY_ID = services.s3.accessKeyId
  process.env.TURNLINE_TEST_S3_SECRET_ACCESS_KEY = services.s3.secretAccessKey
  process.env.TURNLINE_TEST_REDIS_URL = services.redisUrl
}
try {
  for (const revision of values.before?.split(',') ?? []) trees.push(await checkoutBefore(revision))
  for (const key of values.variants.split(',')) {
    const build = BUILDERS[key]
    if (!build) {
      throw new Error(`unknown variant ${key} (known: ${Object.keys(BUILDERS).join(', ')})`)
    }
    const dir = join(root, key)
    await mkdir(dir, { recursive: true })
    variants.push(await build(scenario, dir))
    for (const [i, tree] of trees.entries()) {
      const before = await beforeBuilder(tree, key)
      if (!before) continue
      const beforeDir = join(root, `${key}-before-${i}`)
      await mkdir(beforeDir, { recursive: true })
      variants.push(await before(scenario, beforeDir))
    }
  }
  const baseline = variants[0]?.name ?? ''
  console.log(
    `turn cost: ${SESSIONS} sessions × ${TURNS} turns × ${ROUNDS} rounds, interleaved; ` +
      (TOOL_CALLS
        ? 'each turn = 2 streamed chat requests to a zero-latency mock + 1 call of a session ' +
          'HTTP tool (signed POST to a loopback receiver; the raw loop POSTs the same receiver); '
        : 'each turn = 1 streamed chat request to a zero-latency mock, answered without a tool call; ') +
      `data under ${root}; Node ${process.version}`,
  )
  for (const variant of variants) {
    for (let w = 0; w < WARMUP; w++) await runSession(variant, -1 - w, undefined)
  }
  scenario.forget()
  const rounds: Map<string, RoundStats>[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length] as Variant)
    const samples = new Map(variants.map((v) => [v.name, emptySample()]))
    for (let s = 0; s < SESSIONS; s++) {
      for (const variant of order)
        await runSession(variant, r * SESSIONS + s, samples.get(variant.name))
      if (s % 10 === 9) scenario.forget()
    }
    const stats = new Map([...samples].map(([name, sample]) => [name, roundStats(sample)]))
    rounds.push(stats)
    console.log(
      `round ${r + 1}/${ROUNDS}: ${variants.map((v) => `${v.name} ${stats.get(v.name)?.mean.toFixed(2)} ms`).join(', ')}`,
    )
  }
  const names = variants.map((v) => v.name)
  console.log(
    `\nmedians over ${ROUNDS} rounds (per turn; ratios to "${baseline}" of the same round):`,
  )
  console.log(report(names, rounds, baseline))
  console.log('\nmean per round:')
  console.log(roundMeans(names, rounds))
  console.log('\nmedian ms by turn (turn 1 first):')
  console.log(turnProfile(names, rounds))
  scenario.forget()
} finally {
  for (const variant of variants) await variant.close()
  await scenario.close()
  for (const tree of trees) await tree.remove()
  await rm(root, { recursive: true, force: true })
}
