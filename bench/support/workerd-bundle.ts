import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const root = join(import.meta.dirname, '../..')
export const workerdBin = join(root, 'node_modules/.bin/workerd')

/** A module uploaded beside worker.js, named by its path below the output folder. */
export interface WorkerModule {
  name: string
  /**
   * `data`: the rank tables (`*.bin`, wrangler.toml `[[rules]]`); `text`: the same in revisions
   * before them. Nothing to compile.
   */
  type: 'esModule' | 'text' | 'data'
  raw: number
  gzip: number
  /** Imported statically from worker.js (directly or through another such module): compiled at start. */
  atStart: boolean
}

export interface WorkerBundle {
  file: string
  /** worker.js alone. */
  raw: number
  gzip: number
  /** The modules beside it (the chunks loaded on demand and their shared chunks, the tables). */
  modules: WorkerModule[]
  /** worker.js and every JavaScript module imported statically from it: what a start compiles. */
  atStart: { raw: number; gzip: number }
  packages: [string, number][]
}

/**
 * functions/entries/worker.ts bundled exactly as `wrangler deploy` would (wrangler.toml), from
 * this checkout or another source tree (`from`, also one from before the Worker was split into
 * modules: everything in worker.js, the tables beside it). `minify` is wrangler's flag: it
 * applies to worker.js; the modules beside it come minified from the build command.
 */
export async function workerBundle(
  outdir: string,
  minify: boolean,
  from = root,
): Promise<WorkerBundle> {
  const args = ['deploy', '--dry-run', '--outdir', outdir, '--metafile']
  execFileSync(
    join(root, 'node_modules/.bin/wrangler'),
    [...args, minify ? '--minify' : '--no-minify'],
    {
      cwd: from,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  const file = join(outdir, 'worker.js')
  const code = await readFile(file)
  const packages = await packageSizes(outdir, from)
  const modules: WorkerModule[] = []
  const sources = new Map<string, string>()
  for (const entry of await readdir(outdir, { recursive: true, withFileTypes: true })) {
    const name = relative(outdir, join(entry.parentPath, entry.name))
    if (!entry.isFile() || name === 'worker.js' || /\.(map|md|json)$/.test(name)) continue
    const content = await readFile(join(outdir, name))
    const type = name.endsWith('.js') ? 'esModule' : name.endsWith('.bin') ? 'data' : 'text'
    if (type === 'esModule') sources.set(name, content.toString())
    modules.push({
      name,
      type,
      raw: content.length,
      gzip: gzipSync(content).length,
      atStart: false,
    })
  }
  const reached = staticImports(code.toString(), sources)
  for (const module of modules) module.atStart = reached.has(module.name)
  const atStart = { raw: code.length, gzip: gzipSync(code).length }
  for (const module of modules.filter((m) => m.atStart && m.type === 'esModule')) {
    atStart.raw += module.raw
    atStart.gzip += module.gzip
  }
  return { file, raw: code.length, gzip: gzipSync(code).length, modules, atStart, packages }
}

/** One line: what a start compiles, what waits until imported, the tables (data or text). */
export function describeWorkerBundle(bundle: WorkerBundle): string {
  const kb = (bytes: number) => `${(bytes / 1000).toFixed(0)} kB`
  const sum = (list: WorkerModule[]) => list.reduce((total, m) => total + m.raw, 0)
  const js = bundle.modules.filter((m) => m.type === 'esModule')
  const later = js.filter((m) => !m.atStart)
  const texts = bundle.modules.filter((m) => m.type !== 'esModule')
  return (
    `worker.js ${kb(bundle.raw)}; compiled at start ${kb(bundle.atStart.raw)} ` +
    `(${kb(bundle.atStart.gzip)} gzip, ${js.length - later.length + 1} modules); ` +
    `on demand ${kb(sum(later))} in ${later.length} modules; tables ${kb(sum(texts))}`
  )
}

/** The modules beside worker.js that it imports statically, directly or through one another. */
function staticImports(main: string, sources: Map<string, string>): Set<string> {
  const reached = new Set<string>()
  const visit = (code: string) => {
    // `import{…}from"./x.js"` and `import"./x.js"`; `import("./x.js")` (on demand) has a paren.
    for (const [, path] of code.matchAll(/(?:\bfrom|\bimport)\s*"\.\/([^"]+)"/g)) {
      if (path === undefined || reached.has(path)) continue
      reached.add(path)
      const source = sources.get(path)
      if (source !== undefined) visit(source)
    }
  }
  visit(main)
  return reached
}

/**
 * The largest packages by minified bytes: from the build command's metafile
 * (dist/worker-meta.json) where the Worker is split into modules, else from wrangler's.
 */
async function packageSizes(outdir: string, from: string): Promise<[string, number][]> {
  const split = join(from, 'dist', 'worker-meta.json')
  const metaFile = existsSync(split) ? split : join(outdir, 'bundle-meta.json')
  const meta = JSON.parse(await readFile(metaFile, 'utf8')) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>
  }
  const byPackage = new Map<string, number>()
  for (const output of Object.values(meta.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const key = packageOf(input)
      byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput)
    }
  }
  return [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 8)
}

function packageOf(input: string): string {
  const at = input.lastIndexOf('node_modules/')
  if (at < 0) return `(turnline) ${input.split('/')[0]}/`
  const parts = input.slice(at + 'node_modules/'.length).split('/')
  return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? input)
}

/** wrangler.toml's compatibility date and flags, as `workerd serve` takes them. */
export interface Compatibility {
  date: string
  flags: string[]
}

export async function compatibility(): Promise<Compatibility> {
  const toml = await readFile(join(root, 'wrangler.toml'), 'utf8')
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1]
  if (!date) throw new Error('wrangler.toml has no compatibility_date')
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1] ?? ''
  return { date, flags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? '') }
}

/**
 * Writes a `workerd serve` config in `dir` for one ES module (and the modules beside it)
 * listening on 127.0.0.1:port, with `vars` as text bindings; with `localOutbound` its fetches
 * may reach this machine's loopback (the bench's mock model and tool receiver). Returns its path.
 */
export async function workerdConfig(options: {
  dir: string
  moduleFile: string
  modules?: Pick<WorkerModule, 'name' | 'type'>[]
  compatibility: Compatibility
  port: number
  vars: Record<string, string>
  localOutbound?: boolean
}): Promise<string> {
  const { dir, moduleFile, port } = options
  const { date, flags } = options.compatibility
  const config = join(dir, `config-${port}.capnp`)
  const modules = options.modules ?? []
  const bindings = Object.entries(options.vars)
    .map(([name, value]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(value)})`)
    .join(', ')
  const outbound = options.localOutbound ? `\n  globalOutbound = "local",` : ''
  const services = options.localOutbound
    ? `(name = "main", worker = .worker), (name = "local", network = (allow = ["public", "private", "local"]))`
    : `(name = "main", worker = .worker)`
  await writeFile(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ ${services} ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "${relative(dir, moduleFile)}"),
${modules.map(({ name, type }) => `    (name = "${name}", ${type} = embed "${relative(dir, join(moduleFile, '..', name))}"),`).join('\n')}
  ],
  compatibilityDate = "${date}",
  compatibilityFlags = [${flags.map((f) => JSON.stringify(f)).join(', ')}],${outbound}
  bindings = [ ${bindings} ],
);
`,
  )
  return config
}

/** bench/support/trivial/hono-app.ts as one ES module for workerd (the floor of a Worker). */
export async function trivialWorker(outfile: string): Promise<string> {
  await build({
    entryPoints: [join(root, 'bench/support/trivial/hono-app.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    minify: true,
    outfile,
    logLevel: 'warning',
  })
  return outfile
}
