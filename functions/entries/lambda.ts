import { keepArrayResultsPacked } from './packed-array-results.ts'
import { limitRegExpBacktracking } from './regexp-backtracking.ts'

/**
 * AWS Lambda entry (`index.*` of the bundle that `npm run build:lambda` writes to dist/lambda):
 * V8's flags as the Node entry (node.ts) sets them — the linear-time regexp engine after
 * excessive backtracking, the arrays of `map`, `filter` and their kin kept of one kind — then
 * the handlers (lambda-handlers.ts: the configuration, the deps, the app). The handlers' modules
 * are imported after the flags, not statically: a static import is evaluated before this
 * module's body, and in the split bundle every chunk the entry imports statically (zod, the
 * contract, the engine) would be evaluated first, so the flags would come after their code had
 * run. This module imports nothing else, so nothing is compiled before they are set.
 */
limitRegExpBacktracking()
keepArrayResultsPacked()
export const { handler, work, sweep, callbacks, retention } = await import('./lambda-handlers.ts')
