/**
 * Worker bundle size and cold start. Bundles functions/entries/worker.ts exactly as `wrangler deploy`
 * would (wrangler.toml: its alias, minified), prints the raw and gzip size (also unminified), the
 * largest packages in it, then starts bare workerd on the bundle a few times and prints the
 * median time from spawn to the first answer of GET /healthz (process start, compiling every
 * module, building deps on the first request; TURNLINE_SINGLE_TENANT as `wrangler dev` gives it).
 * A trivial Worker gives the floor. Figures, not
 * pass/fail: the machines are shared and noisy.
 *
 *   npx tsx bench/cold-start.ts [--runs 7]
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { rankTableEncoding } from '../functions/entries/worker-rank-table.ts'
import { freePort } from '../test/support/runtime-process.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } })
const RUNS = Number(values.runs)
const root = new URL('../', import.meta.url).pathname
const bin = (name: string) => join(root, 'node_modules/.bin', name)
const quietEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
}

interface Bundle {
  file: string
  raw: number
  gzip: number
  /** Text modules beside worker.js (the rank tables, wrangler.toml `[[rules]]`), by file name. */
  texts: { name: string; raw: number; gzip: number }[]
  packages: [string, number][]
}

async function bundle(outdir: string, minify: boolean): Promise<Bundle> {
  const args = ['deploy', '--dry-run', '--outdir', outdir, '--metafile']
  execFileSync(bin('wrangler'), [...args, minify ? '--minify' : '--no-minify'], {
    cwd: root,
    env: quietEnv,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const file = join(outdir, 'worker.js')
  const code = await readFile(file)
  const meta = JSON.parse(await readFile(join(outdir, 'bundle-meta.json'), 'utf8')) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>
  }
  const byPackage = new Map<string, number>()
  for (const output of Object.values(meta.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const key = packageOf(input)
      byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput)
    }
  }
  const packages = [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 8)
  const texts = []
  for (const name of await readdir(outdir)) {
    if (name === 'worker.js' || /\.(map|md|json)$/.test(name)) continue
    const text = await readFile(join(outdir, name))
    texts.push({ name, raw: text.length, gzip: gzipSync(text).length })
  }
  return { file, raw: code.length, gzip: gzipSync(code).length, packages, texts }
}

function packageOf(input: string): string {
  const at = input.lastIndexOf('node_modules/')
  if (at < 0) return `(turnline) ${input.split('/')[0]}/`
  const parts = input.slice(at + 'node_modules/'.length).split('/')
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? input)
}

async function compatibilityDate(): Promise<string> {
  const toml = await readFile(join(root, 'wrangler.toml'), 'utf8')
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1]
  if (!date) throw new Error('wrangler.toml has no compatibility_date')
  return date
}

interface Timing {
  cold: number
  warm: number
}

/** Spawns `workerd serve` on one module and times spawn → first 200 from GET /healthz. */
async function coldStart(
  dir: string,
  moduleFile: string,
  date: string,
  texts: string[] = [],
): Promise<Timing> {
  const port = await freePort()
  const config = join(dir, `config-${port}.capnp`)
  await writeFile(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "${relative(dir, moduleFile)}"),
${texts.map((name) => `    (name = "${name}", text = embed "${relative(dir, join(moduleFile, '..', name))}"),`).join('\n')}
  ],
  compatibilityDate = "${date}",
  bindings = [ (name = "TURNLINE_SINGLE_TENANT", text = "1") ],
);
`,
  )
  const started = performance.now()
  const child = spawn(bin('workerd'), ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] })
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
  const plain = await bundle(join(dir, 'plain'), false)
  const minified = await bundle(join(dir, 'min'), true)
  console.log('Worker bundle (functions/entries/worker.ts, wrangler deploy --dry-run):')
  console.log(
    `  minified (as wrangler.toml deploys)  ${kb(minified.raw)} raw, ${kb(minified.gzip)} gzip`,
  )
  console.log(`  unminified                           ${kb(plain.raw)} raw, ${kb(plain.gzip)} gzip`)
  console.log('  largest parts (minified):')
  for (const [name, bytes] of minified.packages)
    console.log(`    ${kb(bytes).padStart(7)}  ${name}`)
  console.log('  text modules beside it (not compiled at startup):')
  for (const text of minified.texts)
    console.log(`    ${kb(text.raw).padStart(7)} raw, ${kb(text.gzip)} gzip  ${text.name}`)
  const total = minified.texts.reduce((sum, t) => sum + t.gzip, minified.gzip)
  console.log(`  upload in all: ${kb(total)} gzip`)

  const date = await compatibilityDate()
  const floorFile = join(dir, 'floor.js')
  await writeFile(floorFile, 'export default { fetch: () => new Response("ok") }\n')
  const names = (built: Bundle) => built.texts.map((t) => t.name)
  const kinds: Record<string, [string, string[]]> = {
    'trivial Worker': [floorFile, []],
    Turnline: [minified.file, names(minified)],
    'Turnline unminified': [plain.file, names(plain)],
  }
  const runs = new Map<string, Timing[]>(Object.keys(kinds).map((k) => [k, []]))
  for (let i = 0; i < RUNS; i++) {
    for (const [kind, [file, texts]] of Object.entries(kinds))
      runs.get(kind)?.push(await coldStart(dir, file, date, texts))
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
  // What the first count that needs an encoding pays in the Worker: the table parsed from its
  // text and the encoding built (here in Node's V8, as workerd's; once per isolate).
  for (const text of minified.texts) {
    const encoding = text.name.endsWith('cl100k_base') ? 'cl100k_base' : 'o200k_base'
    const source = await readFile(join(dir, 'min', text.name), 'utf8')
    const started = performance.now()
    rankTableEncoding(encoding, source).countTokens('warm up')
    console.log(`  first ${encoding} count: ${(performance.now() - started).toFixed(0)} ms`)
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}
