/**
 * Worker bundle size and cold start. Bundles functions/entries/worker.ts exactly as `wrangler deploy`
 * would (wrangler.toml: its build command, minified), prints the raw and gzip size of what a start
 * compiles and of the modules loaded on demand (also with wrangler's minify off, which leaves the
 * build command's modules as they are), the largest packages in it, then starts bare workerd on
 * the bundle a few times and prints the
 * median time from spawn to the first answer of GET /healthz (process start, compiling every
 * module, building deps on the first request; TURNLINE_SINGLE_TENANT as `wrangler dev` gives it).
 * A trivial Worker gives the floor. Figures, not
 * pass/fail: the machines are shared and noisy.
 *
 *   npx tsx bench/cold-start.ts [--runs 7]
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadTokenizer, useRankTables } from '../src/core/compaction/bpe-tokenizer.ts'
import { freePort } from '../test/support/runtime-process.ts'
import { median } from './support/stats.ts'
import {
  type Compatibility,
  compatibility,
  describeWorkerBundle,
  type WorkerModule,
  workerBundle,
  workerdBin,
  workerdConfig,
} from './support/workerd-bundle.ts'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } })
const RUNS = Number(values.runs)

interface Timing {
  cold: number
  warm: number
}

/** Spawns `workerd serve` on one module and times spawn → first 200 from GET /healthz. */
async function coldStart(
  dir: string,
  moduleFile: string,
  compat: Compatibility,
  modules: WorkerModule[] = [],
): Promise<Timing> {
  const port = await freePort()
  const config = await workerdConfig({
    dir,
    moduleFile,
    modules,
    compatibility: compat,
    port,
    vars: { TURNLINE_SINGLE_TENANT: '1' },
  })
  const started = performance.now()
  const child = spawn(workerdBin, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`workerd exited:\n${stderr}`)
      if (performance.now() - started > 20_000)
        throw new Error(`workerd not up in 20 s:\n${stderr}`)
      const status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status,
        () => 0,
      )
      if (status === 200) {
        const cold = performance.now() - started
        const again = performance.now()
        await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.arrayBuffer())
        return { cold, warm: performance.now() - again }
      }
      if (status !== 0) throw new Error(`GET /healthz answered ${status}:\n${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    }
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`
const dir = await mkdtemp(join(tmpdir(), 'turnline-cold-'))
try {
  const plain = await workerBundle(join(dir, 'plain'), false)
  const minified = await workerBundle(join(dir, 'min'), true)
  console.log('Worker bundle (functions/entries/worker.ts, wrangler deploy --dry-run):')
  console.log(`  minified (as wrangler.toml deploys)  ${describeWorkerBundle(minified)}`)
  console.log(`  wrangler's minify off                ${describeWorkerBundle(plain)}`)
  console.log('  largest parts (minified):')
  for (const [name, bytes] of minified.packages)
    console.log(`    ${kb(bytes).padStart(7)}  ${name}`)
  console.log('  modules beside worker.js (on demand unless marked):')
  for (const module of minified.modules) {
    const mark = module.atStart ? ' (at start)' : ''
    console.log(
      `    ${kb(module.raw).padStart(7)} raw, ${kb(module.gzip)} gzip  ${module.type} ${module.name}${mark}`,
    )
  }
  const total = minified.modules.reduce((sum, m) => sum + m.gzip, minified.gzip)
  console.log(`  upload in all: ${kb(total)} gzip`)

  const compat = await compatibility()
  const floorFile = join(dir, 'floor.js')
  await writeFile(floorFile, 'export default { fetch: () => new Response("ok") }\n')
  const kinds: Record<string, [string, WorkerModule[]]> = {
    'trivial Worker': [floorFile, []],
    Turnline: [minified.file, minified.modules],
    'Turnline unminified': [plain.file, plain.modules],
  }
  const runs = new Map<string, Timing[]>(Object.keys(kinds).map((k) => [k, []]))
  for (let i = 0; i < RUNS; i++) {
    for (const [kind, [file, modules]] of Object.entries(kinds))
      runs.get(kind)?.push(await coldStart(dir, file, compat, modules))
  }
  const ms = (list: number[]) =>
    `${median(list).toFixed(0)} ms (${Math.min(...list).toFixed(0)}–${Math.max(...list).toFixed(0)})`
  console.log(
    `Bare workerd, median of ${RUNS} (range): spawn → first GET /healthz 200; then one more`,
  )
  for (const [kind, list] of runs) {
    const cold = ms(list.map((t) => t.cold))
    const warm = median(list.map((t) => t.warm)).toFixed(1)
    console.log(`  ${kind.padEnd(20)} cold ${cold}, warm ${warm} ms`)
  }
  // What the first count that needs an encoding pays in the Worker: the hash table computed from
  // the uploaded table's bytes (here in Node's V8, as workerd's; once per isolate).
  for (const table of minified.modules.filter((m) => m.type === 'data')) {
    const encoding = table.name.includes('cl100k_base') ? 'cl100k_base' : 'o200k_base'
    const bytes = new Uint8Array(await readFile(join(dir, 'min', table.name)))
    useRankTables(async () => bytes)
    const started = performance.now()
    ;(await loadTokenizer(encoding)).count('warm up')
    console.log(`  first ${encoding} count: ${(performance.now() - started).toFixed(0)} ms`)
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}
