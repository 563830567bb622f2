import { loadWithCompileCache } from './compile-cache.ts'

/**
 * The built server's entry (`node dist/node/server.mjs`): Node's compile cache on before the
 * server's module graph (`node.ts`) loads, so that a second start reuses its compiled code.
 */
await loadWithCompileCache(() => import('./node.ts'))
