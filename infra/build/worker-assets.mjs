// The Worker's static assets (wrangler.toml [assets], written by its [build] command before
// every `wrangler dev` and `wrangler deploy`): the API reference renderer at /docs/scalar.js,
// 4.7 MiB, which the Worker script could not carry (docs/deploy/cloudflare-workers.md).
//
//   node infra/build/worker-assets.mjs     → dist/worker-assets/docs/scalar.js
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { copyReferenceScript } from './reference-script.mjs'

const root = fileURLToPath(new URL('../../', import.meta.url))
copyReferenceScript(path.join(root, 'dist', 'worker-assets', 'docs', 'scalar.js'))
