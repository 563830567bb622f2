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
 *
 * Figures, not pass/fail.
 *
 * Each target's CPU time up to its first answered turn is read from /proc over its process tree
 * (the server, the embedded runner and what they launched) just after that answer.
 *
 *   npx tsx bench/cold-start-platforms.ts [--runs 5] [--only node,built,deno,workerd]
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
import { type Target, trivialTargets, turnlineTargets } from './support/cold-start-targets.ts'
import { startPeerProcesses } from './support/peer-processes.ts'
import { treeCpuMs } from './support/process-tree-cpu.ts'
import { median } from './support/stats.ts'
import { MODEL, TOOL_MASTER_SECRET } from './support/turn-cost-scenario.ts'
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

const context = {
  here,
  scratch: root,
  env: (port: number, dir: string): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PORT: String(port),
    TURNLINE_DATA_DIR: join(dir, 'data'),
    OPENAI_BASE_URL: peers.mock.baseURL,
    OPENAI_API_KEY: 'bench',
    TURNLINE_MODEL: MODEL,
    TURNLINE_TOOL_SECRET: TOOL_MASTER_SECRET,
    DENO_NO_UPDATE_CHECK: '1',
    NO_COLOR: '1',
  }),
}

/**
 * Spawns the target and times spawn → first answer of GET /healthz (`up`) and spawn → first
 * answered turn (or POST, for a trivial app).
 */
async function coldStart(
  target: Target,
  index: number,
  run: number,
): Promise<{ up: number; turn: number; cpu: number }> {
  const port = await freePort()
  const dir = join(root, `${target.runtime}-${index}-${run}`)
  const { file, args, env, cwd } = await target.command(port, dir)
  const url = `http://127.0.0.1:${port}`
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
  try {
    for (;;) {
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
    const up = performance.now() - started
    if (target.trivial) {
      const answer = await fetch(`${url}/turn`, { method: 'POST', body: '{"input":"hi"}' })
      await answer.json()
    } else {
      const client = httpClientVariant(target.name, url, peers, async () => 0)
      const session = await client.newSession(0)
      await session.turn('step 1', `cold-${run}`)
    }
    const turn = performance.now() - started
    return { up, turn, cpu: treeCpuMs([child.pid ?? 0])[0] ?? Number.NaN }
  } finally {
    if (child.exitCode === null && child.pid !== undefined) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      process.kill(-child.pid, 'SIGKILL')
      await exited
    }
  }
}

let before: BeforeTree | undefined
try {
  const wanted = values.only.split(',')
  before = values.before === undefined ? undefined : await checkoutBefore(values.before)
  const builds = values.built.split(',')
  const targets = [
    ...(await trivialTargets(context, wanted)),
    ...(before ? await turnlineTargets(context, before, wanted, builds) : []),
    ...(await turnlineTargets(context, { label: '', root: here }, wanted, builds)),
  ]
  const times = new Map(targets.map((t) => [t.name, [] as number[]]))
  const ups = new Map(targets.map((t) => [t.name, [] as number[]]))
  const cpus = new Map(targets.map((t) => [t.name, [] as number[]]))
  for (let run = 0; run < RUNS; run++) {
    for (const [index, target] of targets.entries()) {
      const { up, turn, cpu } = await coldStart(target, index, run)
      cpus.get(target.name)?.push(cpu)
      ups.get(target.name)?.push(up)
      times.get(target.name)?.push(turn)
    }
    await peers.forget()
  }
  console.log(`cold start, spawn → first answered turn (Turnline) or POST (trivial), ${RUNS} runs:`)
  // Listening → the first turn answered (session created, one turn), per run: a fresh
  // process's first session and turn, apart from the start itself.
  const afterUp = (name: string) =>
    (times.get(name) ?? []).map((ms, i) => ms - (ups.get(name)?.[i] ?? Number.NaN))
  const floor = (runtime: string) =>
    targets.find((t) => t.trivial && t.runtime === runtime)?.name ?? ''
  for (const target of targets) {
    const list = times.get(target.name) ?? []
    const base = times.get(floor(target.runtime)) ?? []
    const ratios = list.map((ms, i) => ms / (base[i] ?? Number.NaN))
    console.log(
      `  ${target.name.padEnd(45)} median ${median(list).toFixed(0).padStart(5)} ms ` +
        `(${Math.min(...list).toFixed(0)}–${Math.max(...list).toFixed(0)}), ` +
        `CPU ${median(cpus.get(target.name) ?? []).toFixed(0)} ms` +
        (target.trivial
          ? ''
          : `, × trivial ${median(ratios).toFixed(2)} (median of per-run ratios); ` +
            `listening after ${median(ups.get(target.name) ?? []).toFixed(0)} ms, ` +
            `first turn answered ${median(afterUp(target.name)).toFixed(0)} ms after that`),
    )
  }
} finally {
  await before?.remove()
  await peers.close()
  await rm(root, { recursive: true, force: true })
}
