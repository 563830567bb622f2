/**
 * Per-turn cost on the path users run, beside bench/turn-cost.ts (same workload, same report).
 *
 * Turnline runs as its own process started the way a user starts it, with its default
 * configuration (operator log on, written to a file; the embedded reference runner; the sandbox
 * as detected): `node infra/start.mjs` (what `npm start` runs) and `node dist/node/server.mjs`
 * (the build: run `npm run build` first). The mock of the OpenAI API and the signed-HTTP-tool
 * receiver are each their own process too (bench/support/peer-process.ts), and the raw loop
 * (bench/support/raw-loop.ts) and the in-process engine run in this process against those same
 * peers. Variants (`--variants`, in this order by default):
 *
 *   raw     the raw loop (baseline)
 *   fs      the engine in this process (SessionService on the fs store, no runner, log off)
 *   start   `node infra/start.mjs`, fs store, over HTTP
 *   built   `node dist/node/server.mjs`, fs store, over HTTP
 *   s3      `node infra/start.mjs` on S3 (moto_server) + Upstash (the REST proxy over
 *           redis-server), both counted from a process of their own (bench/support/store-peers.ts:
 *           the proxy's own notes, moto's request log); needs `npm run services:start`. Not in the
 *           default set.
 *   s3lim   the same, multi-tenant (an API key) with per-tenant limits that never refuse a bench
 *           turn (request window, daily tokens, turn slots), counted in Upstash. Not in the default set.
 *
 * `--store-rtt <ms>` makes the s3 variants' stores that far away (the Upstash proxy holds every
 * request that long, an HTTP delay proxy in front of moto half that long each way), so that
 * requests sent together show as one round trip.
 *
 * `--before <rev>` also starts `infra/start.mjs` of that revision (extracted with git archive), on
 * fs, and on S3 + Upstash for each of `s3`/`s3lim` in `--variants`.
 *
 * Besides bench/turn-cost.ts's table it prints, per variant, the medians over rounds of: the
 * server's CPU per turn counted from /proc over its process tree (server, runner and anything
 * they launched), this process's CPU per turn (the client, or the whole engine for `fs`), the
 * mock's and the receiver's CPU per turn, the time to create a session, the first turn of a
 * session (median over sessions) and the later turns' median, and their ratio. Object requests,
 * coordinator trips and fsyncs are counted in this process only: "—"/0 for server processes.
 *
 *   npm run bench:turn-cost-user -- [--sessions 50] [--turns 20] [--rounds 3] [--warmup 2]
 *                                   [--variants raw,fs,start,built] [--before main] [--dir .tmp/bench]
 *                                   [--tool-calls 1] [--node-args='--cpu-prof --cpu-prof-dir=…']
 *                                   [--store-rtt 0]
 */
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { benchDataDir } from './support/bench-data-dir.ts'
import { fsyncCount, installFsyncCounter } from './support/fsync-counter.ts'
import { type PeerProcesses, startPeerProcesses } from './support/peer-processes.ts'
import { treeCpuMs } from './support/process-tree-cpu.ts'
import { rawVariant } from './support/raw-loop.ts'
import {
  type RoundSample,
  report,
  roundMeans,
  roundStats,
  turnProfile,
} from './support/turn-cost-report.ts'
import { fsVariant } from './support/turnline-variants.ts'
import { type ProcessSample, processReport } from './support/user-path-report.ts'
import { type Entry, s3Entry, serverEntry } from './support/user-path-variants.ts'

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '50' },
    turns: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '3' },
    variants: { type: 'string', default: 'raw,fs,start,built' },
    dir: { type: 'string', default: benchDataDir() },
    warmup: { type: 'string', default: '2' },
    before: { type: 'string' },
    'tool-calls': { type: 'string', default: '1' },
    /** Milliseconds the stores add to every request of the s3 variants. */
    'store-rtt': { type: 'string', default: '0' },
    /** Node options for the server processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
    'node-args': { type: 'string', default: '' },
  },
})
const NODE_ARGS = values['node-args'].split(' ').filter((a) => a !== '')
const SESSIONS = Number(values.sessions)
const TURNS = Number(values.turns)
const ROUNDS = Number(values.rounds)
const WARMUP = Number(values.warmup)
const STORE_RTT = Number(values['store-rtt'])
const here = join(import.meta.dirname, '..')

const BUILDERS: Record<string, (peers: PeerProcesses, dir: string) => Promise<Entry>> = {
  raw: async (peers, dir) => ({ variant: rawVariant(peers, dir) }),
  fs: async (peers, dir) => ({ variant: await fsVariant(peers, dir) }),
  s3: (peers, dir) => s3Entry(peers, dir, NODE_ARGS, { rttMs: STORE_RTT }),
  s3lim: (peers, dir) => s3Entry(peers, dir, NODE_ARGS, { limits: true, rttMs: STORE_RTT }),
  start: (peers, dir) =>
    serverEntry(
      'npm start (infra/start.mjs), fs',
      peers,
      dir,
      here,
      ['infra/start.mjs'],
      NODE_ARGS,
    ),
  built: (peers, dir) => {
    if (!existsSync(join(here, 'dist/node/server.mjs'))) {
      throw new Error('the built variant runs dist/node/server.mjs: run `npm run build` first')
    }
    const argv = ['dist/node/server.mjs']
    return serverEntry('built (dist/node/server.mjs), fs', peers, dir, here, argv, NODE_ARGS)
  },
}

const emptySample = (): RoundSample & ProcessSample => ({
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
  serverCpu: 0,
  mockCpu: 0,
  receiverCpu: 0,
  createMs: [],
  othersCpu: {},
  sequentialEach: [],
  storeRequests: 0,
  coordinatorRequests: 0,
})

async function runSession(
  entry: Entry,
  peers: PeerProcesses,
  index: number,
  sample: (RoundSample & ProcessSample) | undefined,
) {
  const others = Object.entries(entry.others ?? {})
  const roots = [entry.pid ?? -1, peers.pids.mock, peers.pids.receiver, ...others.map(([, p]) => p)]
  const created = performance.now()
  const session = await entry.variant.newSession(index)
  sample?.createMs.push(performance.now() - created)
  // Each turn's start on CLOCK_MONOTONIC, moto's and the Upstash proxy's clock: the stores'
  // requests are read once, after the session, and counted for the turn during which they
  // started (what creating the session asked for comes before the first and is not a turn's).
  const starts: number[] = []
  const before = treeCpuMs(roots)
  for (let t = 0; t < TURNS; t++) {
    const syncs = fsyncCount()
    const cpu = process.cpuUsage()
    if (entry.tripsByTurn) starts.push(Number(process.hrtime.bigint()) / 1e6)
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
  }
  // Read inside the CPU window: the store peers' work of counting stays in their CPU per turn.
  const trips = (await entry.tripsByTurn?.(starts)) ?? []
  const after = treeCpuMs(roots)
  if (!sample) return
  for (const turn of trips) {
    sample.sequentialEach.push(turn.sequential)
    sample.storeRequests += turn.s3
    sample.coordinatorRequests += turn.upstash
    sample.requestsEach.push(turn.s3)
  }
  sample.serverCpu += (after[0] ?? 0) - (before[0] ?? 0)
  sample.mockCpu += (after[1] ?? 0) - (before[1] ?? 0)
  sample.receiverCpu += (after[2] ?? 0) - (before[2] ?? 0)
  for (const [i, [name]] of others.entries()) {
    sample.othersCpu[name] =
      (sample.othersCpu[name] ?? 0) + (after[3 + i] ?? 0) - (before[3 + i] ?? 0)
  }
  sample.bytesPerSession.push(await session.bytes())
}

const root = await mkdtemp(join(values.dir, 'turn-cost-user-'))
// The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700): else the
// runner finds no working sandbox and runs commands unsandboxed.
await chmod(root, 0o711)
await installFsyncCounter(root)
const TOOL_CALLS = values['tool-calls'] !== '0'
const peers = await startPeerProcesses(TOOL_CALLS)
const entries: Entry[] = []
const trees: BeforeTree[] = []
try {
  const keys = values.variants.split(',')
  for (const key of keys) {
    const build = BUILDERS[key]
    if (!build)
      throw new Error(`unknown variant ${key} (known: ${Object.keys(BUILDERS).join(', ')})`)
    const dir = join(root, key)
    await mkdir(dir, { recursive: true })
    entries.push(await build(peers, dir))
  }
  for (const [i, revision] of (values.before?.split(',') ?? []).entries()) {
    const tree = await checkoutBefore(revision)
    trees.push(tree)
    const dir = join(root, `start-before-${i}`)
    await mkdir(dir, { recursive: true })
    const name = `npm start, fs [${tree.label}]`
    entries.push(await serverEntry(name, peers, dir, tree.root, ['infra/start.mjs'], NODE_ARGS))
    // The S3 variants of that revision too, when this run has them.
    for (const limits of [false, true]) {
      if (!keys.includes(limits ? 's3lim' : 's3')) continue
      const s3Dir = join(root, `${limits ? 's3lim' : 's3'}-before-${i}`)
      await mkdir(s3Dir, { recursive: true })
      entries.push(
        await s3Entry(peers, s3Dir, NODE_ARGS, {
          limits,
          rttMs: STORE_RTT,
          cwd: tree.root,
          label: tree.label,
        }),
      )
    }
  }
  const names = entries.map((e) => e.variant.name)
  const baseline = names[0] ?? ''
  console.log(
    `turn cost on the user's path: ${SESSIONS} sessions × ${TURNS} turns × ${ROUNDS} rounds, ` +
      `interleaved; ${TOOL_CALLS ? '2 streamed model requests + 1 signed HTTP tool call' : '1 streamed model request'} ` +
      `per turn; the mock and the receiver are their own processes; data under ${root}; ` +
      `Node ${process.version}`,
  )
  for (const entry of entries) {
    for (let w = 0; w < WARMUP; w++) await runSession(entry, peers, -1 - w, undefined)
  }
  await peers.forget()
  const rounds: Map<string, ReturnType<typeof roundStats>>[] = []
  const processRounds: Map<string, RoundSample & ProcessSample>[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const order = entries.map((_, i) => entries[(i + r) % entries.length] as Entry)
    const samples = new Map(names.map((name) => [name, emptySample()]))
    for (let s = 0; s < SESSIONS; s++) {
      for (const entry of order) {
        await runSession(entry, peers, r * SESSIONS + s, samples.get(entry.variant.name))
      }
      if (s % 10 === 9) await peers.forget()
    }
    for (const [name, sample] of samples) {
      if (!entries.find((e) => e.variant.name === name)?.tripsByTurn) continue
      sample.objectRequests = sample.storeRequests
      sample.coordinatorTrips = sample.coordinatorRequests
    }
    const stats = new Map([...samples].map(([name, sample]) => [name, roundStats(sample)]))
    rounds.push(stats)
    processRounds.push(samples)
    console.log(
      `round ${r + 1}/${ROUNDS}: ${names.map((n) => `${n} ${stats.get(n)?.mean.toFixed(2)} ms`).join(', ')}`,
    )
  }
  console.log(
    `\nmedians over ${ROUNDS} rounds (per turn; ratios to "${baseline}" of the same round):`,
  )
  console.log(report(names, rounds, baseline))
  console.log('\nprocesses and the first turn (medians over rounds; CPU ms per turn):')
  const engine = entries.find((e) => e.pid === undefined && e.variant.name !== baseline)?.variant
    .name
  console.log(processReport(names, processRounds, engine))
  console.log('\nmean per round:')
  console.log(roundMeans(names, rounds))
  console.log('\nmedian ms by turn (turn 1 first):')
  console.log(turnProfile(names, rounds))
  await peers.forget()
} finally {
  for (const entry of entries) await entry.variant.close()
  await peers.close()
  for (const tree of trees) await tree.remove()
  await rm(root, { recursive: true, force: true })
}
