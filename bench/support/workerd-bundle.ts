import { execFileSync } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const root = join(import.meta.dirname, '../..')
export const workerdBin = join(root, 'node_modules/.bin/workerd')

export interface WorkerBundle {
  file: string
  raw: number
  gzip: number
  /** Text modules beside worker.js (the rank tables, wrangler.toml `[[rules]]`), by file name. */
  texts: { name: string; raw: number; gzip: number }[]
  packages: [string, number][]
}

/**
 * functions/entries/worker.ts bundled exactly as `wrangler deploy` would (wrangler.toml), from
 * this checkout or another source tree (`from`).
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
 * Writes a `workerd serve` config in `dir` for one ES module (and the text modules beside it)
 * listening on 127.0.0.1:port, with `vars` as text bindings; with `localOutbound` its fetches
 * may reach this machine's loopback (the bench's mock model and tool receiver). Returns its path.
 */
export async function workerdConfig(options: {
  dir: string
  moduleFile: string
  texts?: string[]
  compatibility: Compatibility
  port: number
  vars: Record<string, string>
  localOutbound?: boolean
}): Promise<string> {
  const { dir, moduleFile, port } = options
  const { date, flags } = options.compatibility
  const config = join(dir, `config-${port}.capnp`)
  const texts = options.texts ?? []
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
${texts.map((name) => `    (name = "${name}", text = embed "${relative(dir, join(moduleFile, '..', name))}"),`).join('\n')}
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
