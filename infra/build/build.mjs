// `npm run build`: compiles the TypeScript entries with esbuild so that production runs plain
// `node` (no tsx, no devDependencies at run time).
//
//   node infra/build/build.mjs            every target
//   node infra/build/build.mjs node       dist/node/{server,runner,runner-child,check,retention,keys}.mjs
//                                         (+ chunks) and reference/scalar.js (the /docs renderer)
//   node infra/build/build.mjs lambda     dist/lambda/index.mjs (+ chunks), handler index.handler,
//                                         and reference/scalar.js
//   node infra/build/build.mjs cli        dist/cli/main.mjs, what cli/turnline.mjs runs without tsx,
//                                         and the runner-child.mjs its embedded engine starts
//   node infra/build/build.mjs client     dist/client/index.mjs + types/, the package's "./client"
//   node infra/build/build.mjs deno       dist/deno/server.mjs (+ chunks), what `deno serve` runs
//                                         in production, and reference/scalar.js
//   node infra/build/build.mjs --out DIR  DIR instead of dist/ (tests build into a temp folder)
//
// node:   our code and the packages it imports in one file per entry plus shared chunks
//         beside them (chunk-*.mjs, and a chunk per adapter a start imports only when
//         configured: S3, Anthropic, MCP, plain Redis). Packages are bundled, not imported from
//         node_modules at run time: a start then reads ≈ 30 files instead of ≈ 300 modules, each
//         resolved and read on its own (≈ 0.1 s of CPU, docs/performance.md, cold start). The
//         production install stays `npm ci --omit=dev` plus dist/ (what the bundle does not
//         reach, a package imported by a name computed at run time, still resolves there).
// client: platform-neutral ESM for browsers, Deno, Workers and Node (zod stays an import), and
//         its declarations (types/), with `.js` import paths that every resolver follows.
// deno:   as node, from functions/entries/deno.ts: ≈ 600 source modules and the packages under
//         them in one file plus chunks beside it, so `deno serve` reads a few files instead of
//         resolving, transpiling and loading each (docs/performance.md, cold start). Packages
//         resolve with Deno's own conditions (`deno` first, then `node`); node builtins stay
//         `node:` imports, which Deno provides. Needs no node_modules at run time.
// lambda: everything bundled (the SDK version we test, not the one the Lambda runtime ships).
//
// node, deno and lambda carry the token counter's rank tables in rank-tables/ beside the entry
// (src/core/compaction/rank-tables/*.bin, read as bytes when an encoding first loads).
//
// Plain Node ESM (no TypeScript) so that it runs before anything is built.

import { cpSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'
import { copyReferenceScript } from './reference-script.mjs'

const root = fileURLToPath(new URL('../../', import.meta.url))
const { values: flags, positionals: wanted } = parseArgs({
  options: { out: { type: 'string' } },
  allowPositionals: true,
})
const dist = path.resolve(flags.out ?? path.join(root, 'dist'))
/** The oldest Node the project supports (package.json engines). */
const TARGET = 'node20.19'

// CommonJS packages inside an ESM bundle call require() for node builtins.
const requireShim = [
  "import { createRequire as __turnlineCreateRequire } from 'node:module';",
  'const require = __turnlineCreateRequire(import.meta.url);',
].join('\n')

// Packages that name node builtins without `node:` (`import('http')`, `require('fs')`): Deno
// resolves only the prefixed names from a module outside node_modules, so the Deno bundle
// imports them prefixed.
const builtinNames = new Set(builtinModules.filter((name) => !name.startsWith('_')))
const nodePrefixed = {
  name: 'node-prefixed-builtins',
  setup(build) {
    build.onResolve({ filter: /^[a-z_/]+$/ }, ({ path: name }) =>
      builtinNames.has(name) ? { path: `node:${name}`, external: true } : undefined,
    )
  },
}

/**
 * hono-openapi's own schema converters, never called (Turnline hands it its own resolver): their
 * dynamic imports of every schema library would keep all of zod's namespace (≈ 40 locales, its
 * AOT compiler: ≈ 400 KB) in the zod chunk every start parses
 * (functions/entries/standard-schema-stand-in.ts; the Worker aliases them in wrangler.toml).
 */
const standardSchemaStandIn = {
  '@standard-community/standard-json': './functions/entries/standard-schema-stand-in.ts',
  '@standard-community/standard-openapi': './functions/entries/standard-schema-stand-in.ts',
}

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: TARGET,
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
  metafile: true,
}

/**
 * A server's entries with what a start does not need (the S3, Anthropic, MCP and Redis adapters
 * and the packages under them) in chunks imported on first use; beside the entries, so that
 * paths taken from import.meta.url (runner-child.mjs, reference/) are the same from a chunk.
 * CommonJS packages inside the ESM chunks call require() for node builtins (Deno has
 * node:module's createRequire too).
 */
const serverChunks = {
  alias: standardSchemaStandIn,
  banner: { js: requireShim },
  splitting: true,
  chunkNames: '[name]-[hash]',
  outExtension: { '.js': '.mjs' },
}

const targets = {
  node: {
    outDir: path.join(dist, 'node'),
    options: {
      ...common,
      entryPoints: {
        server: 'functions/entries/node-start.ts',
        runner: 'adapters/runner/main.ts',
        'runner-child': 'functions/entries/runner-child-start.ts',
        check: 'functions/entries/check-deployment.ts',
        retention: 'functions/entries/retention-cli.ts',
        keys: 'functions/entries/keys-cli.ts',
      },
      ...serverChunks,
    },
    // The API reference renderer (/docs/scalar.js), so production needs no dev dependency, and
    // the token counter's rank tables.
    after: (outDir) => copyServerFiles(outDir),
  },
  cli: {
    outDir: path.join(dist, 'cli'),
    options: {
      ...common,
      entryPoints: {
        main: 'cli/main.ts',
        'runner-child': 'functions/entries/runner-child-start.ts',
      },
      packages: 'external',
      outExtension: { '.js': '.mjs' },
    },
  },
  client: {
    outDir: path.join(dist, 'client'),
    options: {
      ...common,
      platform: 'neutral',
      target: 'es2022',
      entryPoints: { index: 'client/index.ts' },
      packages: 'external',
      outExtension: { '.js': '.mjs' },
    },
    after: (outDir) => emitDeclarations('client/index.ts', path.join(outDir, 'types')),
  },
  deno: {
    outDir: path.join(dist, 'deno'),
    options: {
      ...common,
      entryPoints: { server: 'functions/entries/deno.ts' },
      // What Deno resolves in a package's exports when it runs the sources (`deno`, then `node`).
      conditions: ['deno'],
      plugins: [nodePrefixed],
      // Deno's V8, not the oldest Node: nothing is lowered.
      target: 'esnext',
      ...serverChunks,
    },
    // The API reference renderer (/docs/scalar.js) beside server.mjs: /docs renders offline; and
    // the token counter's rank tables.
    after: (outDir) => copyServerFiles(outDir),
  },
  lambda: {
    outDir: path.join(dist, 'lambda'),
    options: {
      ...common,
      entryPoints: { index: 'functions/entries/lambda.ts' },
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      alias: standardSchemaStandIn,
      minify: true,
      banner: { js: requireShim },
      outExtension: { '.js': '.mjs' },
    },
    // The API reference renderer (/docs/scalar.js) beside index.mjs: /docs renders offline; and
    // the token counter's rank tables.
    after: (outDir) => copyServerFiles(outDir),
  },
}

/**
 * Beside a server's entries: @scalar/api-reference's standalone bundle → OUT/reference/scalar.js
 * (reference-script-file.ts), and the committed rank tables → OUT/rank-tables/ (what
 * functions/entries/rank-table-files.ts reads; without them a start derives each table from
 * gpt-tokenizer's ranks, ≈ 10× slower).
 */
function copyServerFiles(outDir) {
  copyReferenceScript(path.join(outDir, 'reference', 'scalar.js'))
  cpSync(path.join(root, 'src/core/compaction/rank-tables'), path.join(outDir, 'rank-tables'), {
    recursive: true,
  })
}

function size(file) {
  const bytes = statSync(file).size
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(2)} MiB`
    : `${(bytes / 1024).toFixed(1)} KiB`
}

/**
 * `.d.ts` files for `entry` and what it imports, under `outDir` (mirroring the repository), with
 * relative imports ending in `.js` (the sources import `.ts` files). Fails on a type error.
 */
async function emitDeclarations(entry, outDir) {
  const { default: ts } = await import('typescript')
  const options = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
    strict: true,
    declaration: true,
    emitDeclarationOnly: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    skipLibCheck: true,
    rootDir: root,
    outDir,
  }
  const program = ts.createProgram([path.join(root, entry)], options)
  const problems = ts.getPreEmitDiagnostics(program)
  const result = program.emit(undefined, (file, text) => {
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, text.replace(/(from\s+'\.{1,2}\/[^']*)\.ts'/g, "$1.js'"))
  })
  const all = [...problems, ...result.diagnostics]
  if (all.length > 0) {
    const host = {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => root,
      getNewLine: () => '\n',
    }
    console.error(ts.formatDiagnostics(all, host))
    throw new Error(`declarations of ${entry}: ${all.length} error(s)`)
  }
}

async function buildTarget(name) {
  const target = targets[name]
  if (!target) {
    throw new Error(`unknown target ${name} (known: ${Object.keys(targets).join(', ')})`)
  }
  rmSync(target.outDir, { recursive: true, force: true })
  mkdirSync(target.outDir, { recursive: true })
  const result = await build({ ...target.options, outdir: target.outDir })
  await target.after?.(target.outDir)
  // Marks the folder as ESM for tools that look for a package.json next to the code (SAM, zip).
  writeFileSync(path.join(target.outDir, 'package.json'), '{ "type": "module" }\n')
  const outputs = Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.mjs'))
  const entries = outputs.filter((file) => !file.includes('/chunks/'))
  console.log(`${name}: ${path.relative(root, target.outDir)}/`)
  for (const file of entries) console.log(`  ${path.relative(root, file)}  ${size(file)}`)
  const chunks = outputs.length - entries.length
  if (chunks > 0) console.log(`  + ${chunks} chunk(s) loaded on demand`)
}

try {
  for (const name of wanted.length > 0 ? wanted : Object.keys(targets)) await buildTarget(name)
} catch (error) {
  // esbuild has already printed its diagnostics; say which step failed and stop.
  console.error(`build failed: ${error.message}`)
  process.exit(1)
}
