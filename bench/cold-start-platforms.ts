/**
 * Cold start on each platform Turnline deploys to: the time from spawning the runtime to the
 * first answered turn (a session created, then one turn that calls the HTTP tool and answers,
 * against the mock model and the tool receiver, each its own process), against a trivial Hono
 * app on the same runtime (spawn → first answered POST), interleaved, RUNS times each.
 *
 *   node (npm start)   `node infra/start.mjs` (sources through tsx; embedded runner, fs store)
 *   node (built)       `node dist/node/server.mjs` (run `npm run build` first)
 *   deno               `deno serve … functions/entries/deno.ts` (fs store, no runner)
 *                      and `deno serve … dist/deno/server.mjs`, the Deno build (built into the
 *                      scratch folder and started there, no node_modules beside it)
 *   workerd            bare `workerd serve` on the Worker bundle `wrangler deploy` would upload
 *                      (sessions in the isolate's memory: no S3 or Upstash to wait for; bindings
 *                      as text, fetches allowed to this machine's mock and receiver)
 *   trivial (node)     bench/support/trivial/hono-node.ts through tsx, as `npm start` loads code
 *   trivial (node)     bench/support/trivial/hono-node.mjs on plain node, the built server's floor
 *   trivial (deno)     `deno serve bench/support/trivial/hono-app.ts`
 *   trivial (workerd)  bench/support/trivial/hono-app.ts bundled by esbuild, on bare workerd
 *   same work (node)   bench/support/same-work/node.ts through tsx, beside `npm start`
 *   same work (node)   the same bundled by esbuild into the scratch folder, on plain node,
 *                      beside the built server
 *   same work (deno)   `deno serve bench/support/same-work/app.ts`
 *   lambda             a fresh node started as the AWS Lambda Node.js runtime starts a function
 *                      (bench/support/lambda/: its bootstrap on a Runtime API and function URL in
 *                      this process) on `npm run build:lambda`'s bundle (S3 on moto, Upstash,
 *                      the SQS work queue: `npm run services:start` first), on the trivial app
 *                      and on the same-work app, each behind `streamHandle`. No listen to poll:
 *                      the first request waits through the init, whose end (the first
 *                      `invocation/next`) is reported apart. This checkout only (no `--before`).
 *
 * The same-work app is a minimal Hono app whose POST runs the raw loop's one turn
 * (bench/support/raw-loop.ts) against the same mock model and tool receiver: a session file
 * created, two streamed model calls, the signed tool POST, each step appended and fsynced in the
 * start's data folder, the answer sent after the last fsync. Each Turnline target is printed
 * against the trivial app and against the same-work app on its runtime (medians of per-run
 * ratios), and how much later than the same-work app it listens and answers its first turn: the
 * part of the gap that is ours (the runner's start and our code's load before listening, our turn
 * code compiled on its first call after). There is no same-work app on workerd: a Worker has no
 * filesystem to append and fsync a file on (Turnline there keeps sessions in the isolate's
 * memory), so workerd is compared with the trivial Worker only.
 *
 * Figures, not pass/fail.
 *
 * Each target's CPU time up to its first answered turn is read from /proc over its process tree
 * (the server, the embedded runner and what they launched) just after that answer.
 *
 *   npx tsx bench/cold-start-platforms.ts [--runs 5] [--only node,built,deno,workerd,lambda]
 *                                         [--built dist/node/server.mjs,/tmp/before/node/server.mjs]
 *                                         [--before REVISION]
 *
 * `--built` lists built servers to start (several: an A/B of two builds, e.g. one made with
 * `node infra/build/build.mjs node --out DIR` from an earlier revision's tree). `--before` starts
 * Turnline on every runtime asked for from REVISION too (extracted by bench/support/before-tree.ts,
 * built and bundled there, its Deno build too when its build script has that target), in the same
 * interleaved rounds: a before/after per platform.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../test/support/runtime-process.ts'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import {
  startEnv,
  type Target,
  type TargetKind,
  trivialTargets,
  turnlineTargets,
} from './support/cold-start-targets.ts'
import { startLambdaFront } from './support/lambda/front.ts'
import { type LambdaTargets, lambdaTargets } from './support/lambda/targets.ts'
import { startPeerProcesses } from './support/peer-processes.ts'
import { processCpuMs, treeCpuMs } from './support/process-tree-cpu.ts'
import { sameWorkTargets } from './support/same-work-targets.ts'
import { median } from './support/stats.ts'
import { ANSWER } from './support/turn-cost-scenario.ts'
import { httpClientVariant } from './support/turnline-variants.ts'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    only: { type: 'string', default: 'node,built,deno,workerd' },
    built: { type: 'string', default: 'dist/node/server.mjs' },
    before: { type: 'string' },
  },
})
const RUNS = Number(values.runs)
const here = join(import.meta.dirname, '..')
const peers = await startPeerProcesses(true)
const root = await mkdtemp(join(tmpdir(), 'cold-start-'))
await chmod(root, 0o711)

const context = { here, scratch: root, env: startEnv(peers.mock.baseURL) }

/**
 * Spawns the target and times spawn → first answer of GET /healthz (`up`; the floor apps answer
 * it 404) and spawn → first answered turn (or POST, for a floor app). A Lambda function has no
 * listen to poll: its first request waits at the function URL (lambda/front.ts) through the init,
 * as a request that finds no warm instance does, and `up` is spawn → its first
 * `invocation/next` (the init done).
 */
async function coldStart(
  target: Target,
  index: number,
  run: number,
): Promise<{ up: number; turn: number; cpu: number; own: number }> {
  const front = target.runtime === 'lambda' ? await startLambdaFront() : undefined
  const port = front?.runtimePort ?? (await freePort())
  const dir = join(root, `${target.runtime}-${index}-${run}`)
  const { file, args, env, cwd } = await target.command(port, dir)
  const url = front?.url ?? `http://127.0.0.1:${port}`
  const started = performance.now()
  const child: ChildProcess = spawn(file, args, {
    cwd: cwd ?? here,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000)
  })
  const died = new Promise<never>((_, reject) =>
    child.once('exit', (code) =>
      reject(new Error(`${target.name} exited with ${code}:\n${stderr}`)),
    ),
  )
  died.catch(() => {})
  try {
    while (front === undefined) {
      if (child.exitCode !== null)
        throw new Error(`${target.name} exited with ${child.exitCode}:\n${stderr}`)
      if (performance.now() - started > 60_000) throw new Error(`${target.name}: not up in 60 s`)
      const up = await fetch(`${url}/healthz`).then(
        (r) => r.arrayBuffer().then(() => true),
        () => false,
      )
      if (up) break
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
    const listening = performance.now() - started
    await Promise.race([firstAnswer(target, url, run), died, ...(front ? [front.failed] : [])])
    const turn = performance.now() - started
    const up = front ? (await front.initEnded) - started : listening
    const pid = child.pid ?? 0
    return { up, turn, cpu: treeCpuMs([pid])[0] ?? Number.NaN, own: processCpuMs(pid) }
  } finally {
    if (child.exitCode === null && child.pid !== undefined) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      process.kill(-child.pid, 'SIGKILL')
      await exited
    }
    await front?.close()
  }
}

/** The first requests: a session created and its first turn, or one POST for a floor app. */
async function firstAnswer(target: Target, url: string, run: number): Promise<void> {
  if (target.kind !== 'turnline') {
    const answer = await fetch(`${url}/turn`, { method: 'POST', body: '{"input":"hi"}' })
    const body = (await answer.json()) as { text?: string }
    if (target.kind === 'same work' && body.text !== ANSWER)
      throw new Error(`${target.name} answered ${answer.status}: ${JSON.stringify(body)}`)
    return
  }
  const client = httpClientVariant(target.name, url, peers, async () => 0, target.auth)
  const session = await client.newSession(0)
  await session.turn('step 1', `cold-${run}`)
}

let before: BeforeTree | undefined
let lambda: LambdaTargets | undefined
try {
  const wanted = values.only.split(',')
  before = values.before === undefined ? undefined : await checkoutBefore(values.before)
  const builds = values.built.split(',')
  const targets = [
    ...(await trivialTargets(context, wanted)),
    ...(await sameWorkTargets(context, wanted, { url: peers.toolUrl, secret: peers.toolSecret })),
    ...(before ? await turnlineTargets(context, before, wanted, builds) : []),
    ...(await turnlineTargets(context, { label: '', root: here }, wanted, builds)),
  ]
  lambda = await lambdaTargets(context, wanted, { url: peers.toolUrl, secret: peers.toolSecret })
  targets.push(...lambda.targets)
  const times = new Map(targets.map((t) => [t.name, [] as number[]]))
  const ups = new Map(targets.map((t) => [t.name, [] as number[]]))
  const cpus = new Map(targets.map((t) => [t.name, [] as number[]]))
  // The spawned process's own CPU: Turnline's server without its embedded runner.
  const owns = new Map(targets.map((t) => [t.name, [] as number[]]))
  for (let run = 0; run < RUNS; run++) {
    for (const [index, target] of targets.entries()) {
      const { up, turn, cpu, own } = await coldStart(target, index, run)
      cpus.get(target.name)?.push(cpu)
      owns.get(target.name)?.push(own)
      ups.get(target.name)?.push(up)
      times.get(target.name)?.push(turn)
    }
    await peers.forget()
  }
  console.log(
    `cold start, spawn → first answered turn (Turnline) or POST (trivial, same work), ${RUNS} runs:`,
  )
  const list = (map: Map<string, number[]>, name: string) => map.get(name) ?? []
  // Listening → the first turn (or POST) answered, per run: a fresh process's first session and
  // turn, apart from the start itself.
  const afterUp = (name: string) =>
    list(times, name).map((ms, i) => ms - (list(ups, name)[i] ?? Number.NaN))
  const floor = (runtime: string, kind: TargetKind) =>
    targets.find((t) => t.kind === kind && t.runtime === runtime)?.name
  /** Median of per-run ratios of `name`'s times to the floor's (undefined: no such floor). */
  const ratio = (name: string, of: string | undefined) => {
    if (of === undefined) return undefined
    const base = list(times, of)
    return median(list(times, name).map((ms, i) => ms / (base[i] ?? Number.NaN)))
  }
  /** Median of per-run differences `a[i] - b[i]`. */
  const beyond = (a: number[], b: number[]) => median(a.map((ms, i) => ms - (b[i] ?? Number.NaN)))
  for (const target of targets) {
    const { name, kind, runtime } = target
    const ms = list(times, name)
    const trivial = ratio(name, floor(runtime, 'trivial'))
    const same = floor(runtime, 'same work')
    const sameRatio = ratio(name, same)
    const up =
      (runtime === 'lambda' ? 'init (spawn → first invocation/next) ' : 'listening after ') +
      `${median(list(ups, name)).toFixed(0)} ms, ` +
      `first ${kind === 'turnline' ? 'turn' : 'POST'} answered ` +
      `${median(afterUp(name)).toFixed(0)} ms after that`
    const vsSame =
      same === undefined
        ? ', × same work — (no same-work app on this runtime)'
        : `, × same work ${sameRatio?.toFixed(2)}`
    console.log(
      `  ${name.padEnd(45)} median ${median(ms).toFixed(0).padStart(5)} ms ` +
        `(${Math.min(...ms).toFixed(0)}–${Math.max(...ms).toFixed(0)}), ` +
        `CPU ${median(list(cpus, name)).toFixed(0)} ms` +
        (kind === 'trivial'
          ? ''
          : `, × trivial ${trivial?.toFixed(2)} (median of per-run ratios)`) +
        (kind === 'turnline'
          ? `${vsSame}; ${up}`
          : kind === 'same work' || runtime === 'lambda'
            ? `; ${up}`
            : ''),
    )
    if (kind === 'turnline' && same !== undefined) {
      // On Lambda: the init, and no embedded runner (the process is the function alone).
      const lambda = runtime === 'lambda'
      const cpu = lambda
        ? ''
        : `: the server's process +${beyond(list(owns, name), list(cpus, same)).toFixed(0)}, ` +
          `the embedded runner and what it launched ` +
          `${beyond(list(cpus, name), list(owns, name)).toFixed(0)}`
      const start = lambda ? 'init' : 'listening'
      console.log(
        `  ${''.padEnd(45)} beyond the same-work app: ${start} ` +
          `+${beyond(list(ups, name), list(ups, same)).toFixed(0)} ms, first turn after ` +
          `${start} +${beyond(afterUp(name), afterUp(same)).toFixed(0)} ms, CPU ` +
          `+${beyond(list(cpus, name), list(cpus, same)).toFixed(0)} ms${cpu} ` +
          `(medians of per-run differences)`,
      )
    }
  }
} finally {
  await lambda?.close()
  await before?.remove()
  await peers.close()
  await rm(root, { recursive: true, force: true })
}
