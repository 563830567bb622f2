import { loadWithCompileCache } from './compile-cache.ts'

/**
 * The built runner child's entry (`dist/node/runner-child.mjs`, started by `runner-child.ts`):
 * Node's compile cache on before the runner's module graph (`child-main.ts`) loads.
 */
await loadWithCompileCache(() => import('../../adapters/runner/child-main.ts'))
