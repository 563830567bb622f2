// The Worker's code (wrangler.toml `main`), bundled before wrangler sees it: functions/entries/
// worker.ts as dist/worker/worker.js plus chunks beside it, which wrangler uploads as ES modules
// of their own (`find_additional_modules`). workerd compiles every module the Worker imports
// statically before the first request, and wrangler's own bundler puts everything, lazily
// imported or not, in one file; split here, what a start does not need — the Anthropic, MCP and
// S3 adapters and the packages under them, the OpenTelemetry SDK, the tokenizer — is a module
// loaded by the first `import()` that asks for it (docs/performance.md, cold start on workerd).
// Run by the [build] command (worker-build.mjs) before every `wrangler dev` and `wrangler deploy`.
//
// Plain Node ESM (no TypeScript) so that it runs before anything is built.

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Modules replaced in the Worker, resolved from the project's root:
 * - gpt-tokenizer's rank literals (3.6 MB of JavaScript) are left out: the Worker counts with the
 *   rank tables uploaded as Data modules (wrangler.toml's `[[rules]]`,
 *   functions/entries/worker-rank-tables.ts); the package's ranks are never imported there.
 * - The MCP client validates with @cfworker/json-schema (adapters/mcp); the SDK's default Ajv
 *   validator, never constructed, stays out, as do hono-openapi's schema converters (ours is
 *   zod.toJSONSchema).
 * - Three OpenTelemetry packages name their ES modules only under the `module` export condition,
 *   which a Worker build does not set: without these, their CommonJS builds come in, and with
 *   them all of @opentelemetry/semantic-conventions (~85 KiB) where tree shaking keeps a few
 *   names; and a CommonJS package imported on demand becomes a module whose only export is
 *   `default` (adapters/shared/commonjs-exports.ts), so `import('@opentelemetry/api')` gave no
 *   `SpanKind`.
 */
const alias = {
  'gpt-tokenizer/esm/bpeRanks/o200k_base': './functions/entries/worker-packaged-ranks.ts',
  'gpt-tokenizer/esm/bpeRanks/cl100k_base': './functions/entries/worker-packaged-ranks.ts',
  ajv: './functions/entries/worker-ajv.ts',
  'ajv-formats': './functions/entries/worker-ajv.ts',
  '@standard-community/standard-json': './functions/entries/standard-schema-stand-in.ts',
  '@standard-community/standard-openapi': './functions/entries/standard-schema-stand-in.ts',
  '@opentelemetry/api': './node_modules/@opentelemetry/api/build/esm/index.js',
  '@opentelemetry/core': './node_modules/@opentelemetry/core/build/esm/index.js',
  '@opentelemetry/otlp-exporter-base':
    './node_modules/@opentelemetry/otlp-exporter-base/build/esm/index.js',
  '@opentelemetry/otlp-exporter-base/browser-http':
    './node_modules/@opentelemetry/otlp-exporter-base/build/esm/index-browser-http.js',
}

/** Replaces each `alias` import by its file. */
function aliasPlugin(rootDir) {
  const resolve = createRequire(path.join(rootDir, 'package.json')).resolve
  const names = Object.keys(alias).map((name) => name.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&'))
  return {
    name: 'worker-alias',
    setup(build) {
      build.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => ({
        path: resolve(alias[args.path], { paths: [rootDir] }),
      }))
    },
  }
}

/**
 * The token counter's rank tables (functions/entries/worker-rank-tables.ts imports
 * `turnline-worker-rank-tables/<encoding>.bin`): the files worker-rank-tables.mjs wrote to
 * dist/worker-rank-tables/, left as imports of copies under modules/ beside the chunks, which
 * wrangler uploads as Data modules by its default rule for `*.bin`.
 */
function rankTableModules(rootDir, copies) {
  return {
    name: 'worker-rank-tables',
    setup(build) {
      build.onResolve({ filter: /^turnline-worker-rank-tables\/[a-z0-9_]+\.bin$/ }, (args) => {
        const file = args.path.slice('turnline-worker-rank-tables/'.length)
        const name = `modules/rank-tables/${file}`
        copies.set(name, path.join(rootDir, 'dist', 'worker-rank-tables', file))
        return { path: `./${name}`, external: true }
      })
    },
  }
}

/**
 * The globs of wrangler.toml's non-JavaScript `[[rules]]` (none now: the rank tables are
 * rankTableModules' above).
 */
function ruleGlobs(rootDir) {
  const toml = readFileSync(path.join(rootDir, 'wrangler.toml'), 'utf8')
  const globs = []
  for (const [, list] of toml.matchAll(/^globs\s*=\s*\[([^\]]*)\]/gm)) {
    for (const [, glob] of list.matchAll(/"([^"]+)"/g)) if (!glob.endsWith('.js')) globs.push(glob)
  }
  return globs
}

// A glob as wrangler reads these rules: `**` and a slash, any folders; `*`, any part of a name.
function globRegExp(glob) {
  const source = glob
    .split('**/')
    .map((part) => part.replace(/[-/\\^$+?.()|[\]{}]/g, '\\$&').replaceAll('*', '[^/]*'))
    .join('(?:.*/)?')
  return new RegExp(`(?:^|/)${source}$`)
}

/**
 * Imports that a `[[rules]]` glob matches stay imports, of a copy of the file under modules/
 * beside the chunks, named as imported (so the glob still matches it), which wrangler uploads as
 * that rule's module type. `copies` collects them: copy → source file.
 */
function ruleModules(rootDir, copies) {
  const patterns = ruleGlobs(rootDir).map(globRegExp)
  return {
    name: 'worker-rule-modules',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData?.ruleModule || !patterns.some((p) => p.test(args.path))) return
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: { ruleModule: true },
        })
        if (resolved.errors.length > 0) return { errors: resolved.errors }
        const name = `modules/${path.posix.normalize(args.path).replace(/^(\.\.?\/)+/, '')}`
        copies.set(name, resolved.path)
        return { path: `./${name}`, external: true }
      })
    },
  }
}

/**
 * Bundles the Worker into `outDir` (default dist/worker): worker.js, its chunks and their source
 * maps, with the options wrangler itself bundles with (its build conditions, target and
 * `keep_names`), minified (wrangler minifies worker.js again, not the modules beside it). Files
 * are written beside and renamed over, and only files that changed: several `wrangler dev` may
 * build at once (the tests). Files of an earlier build that this one did not write are removed.
 * Returns the esbuild metafile.
 */
export async function bundleWorker({ rootDir = root, outDir } = {}) {
  const out = outDir ?? path.join(rootDir, 'dist', 'worker')
  const copies = new Map()
  const result = await build({
    absWorkingDir: rootDir,
    entryPoints: { worker: path.join(rootDir, 'functions/entries/worker.ts') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2024',
    loader: { '.js': 'jsx', '.mjs': 'jsx', '.cjs': 'jsx' },
    external: ['node:async_hooks'],
    chunkNames: '[name]-[hash]',
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    metafile: true,
    write: false,
    outdir: out,
    logLevel: 'warning',
    plugins: [
      rankTableModules(rootDir, copies),
      aliasPlugin(rootDir),
      ruleModules(rootDir, copies),
    ],
  })
  const files = new Map(result.outputFiles.map((file) => [file.path, file.contents]))
  for (const [name, source] of copies) files.set(path.join(out, name), readFileSync(source))
  for (const [file, contents] of files) {
    if (sameContent(file, contents)) continue
    mkdirSync(path.dirname(file), { recursive: true })
    const partial = `${file}.${process.pid}.partial`
    writeFileSync(partial, contents)
    renameSync(partial, file)
  }
  for (const entry of readdirSync(out, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name)
    if (entry.isFile() && !files.has(file) && !file.endsWith('.partial')) rmSync(file)
  }
  return result.metafile
}

function sameContent(file, contents) {
  try {
    return Buffer.from(contents).equals(readFileSync(file))
  } catch {
    return false
  }
}
