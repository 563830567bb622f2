// wrangler.toml's [build] command, run before every `wrangler dev` and `wrangler deploy`:
// - the Worker's code (worker-bundle.mjs): dist/worker/worker.js, wrangler.toml's `main`, and the
//   modules beside it that wrangler uploads with it, loaded on demand; its esbuild metafile in
//   dist/worker-meta.json (what each module holds: test/runtime/worker-bundle.test.ts);
// - the Worker's static assets ([assets]): the API reference renderer at /docs/scalar.js,
//   4.7 MiB, which the Worker script could not carry (docs/deploy/cloudflare-workers.md);
// - first, the token counter's rank tables it uploads as Data modules (worker-rank-tables.mjs),
//   which the bundle imports.
//
//   node infra/build/worker-build.mjs     → dist/worker/, dist/worker-assets/docs/scalar.js,
//                                           dist/worker-rank-tables/
import { renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { copyReferenceScript } from './reference-script.mjs'
import { bundleWorker } from './worker-bundle.mjs'
import { writeWorkerRankTables } from './worker-rank-tables.mjs'

const root = fileURLToPath(new URL('../../', import.meta.url))
const dist = path.join(root, 'dist')
copyReferenceScript(path.join(dist, 'worker-assets', 'docs', 'scalar.js'))
writeWorkerRankTables()
const meta = await bundleWorker()
const metaFile = path.join(dist, 'worker-meta.json')
writeFileSync(`${metaFile}.${process.pid}.partial`, JSON.stringify(meta))
renameSync(`${metaFile}.${process.pid}.partial`, metaFile)
