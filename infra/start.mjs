// `npm start`: the Node server, from source when the dev dependencies are installed (a clone
// after `npm ci`: edits take effect on the next start, nothing to build), otherwise from the
// compiled build in dist/ (a production install: `npm ci --omit=dev` after `npm run build`).
// Production images run `node dist/node/server.mjs` directly.
//
// Plain Node ESM: it must run before anything is built and without tsx.
import { existsSync } from 'node:fs'
import nodeModule from 'node:module'
import { fileURLToPath } from 'node:url'

// Node's compile cache (Node ≥ 22.1) before anything else loads, tsx and its transpiled modules
// included: the next start reuses the compiled code (functions/entries/compile-cache.ts says
// where it is kept and how to turn it off).
nodeModule.enableCompileCache?.()

const built = fileURLToPath(new URL('../dist/node/server.mjs', import.meta.url))

async function tsxApi() {
  try {
    return await import('tsx/esm/api')
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return null
    throw error
  }
}

const tsx = await tsxApi()
if (tsx) {
  tsx.register()
  // The repository's own .ts files transpiled without tsx's keepNames, where Node allows
  // (infra/start-transform.mjs); tsx resolves every import and loads the rest. Imported here, not
  // at the top: a production install runs dist/ and needs nothing of this.
  const { registerSourceTransform } = await import('./start-transform.mjs')
  await registerSourceTransform(fileURLToPath(new URL('..', import.meta.url)))
  await import('../functions/entries/node.ts')
} else if (existsSync(built)) {
  process.setSourceMapsEnabled?.(true)
  await import(built)
} else {
  console.error(
    'turnline: cannot start: the dev dependencies (tsx) are not installed and there is no build ' +
      'in dist/.\n' +
      '  development:  npm ci && npm start\n' +
      '  production:   npm ci && npm run build && npm ci --omit=dev && node dist/node/server.mjs\n' +
      '                (or the Docker image: docs/deploy/node-docker.md)',
  )
  process.exit(1)
}
