import { sweepRetention } from '../../src/store/retention-sweep.ts'
import { createDeps } from '../deps.ts'
import { onStartupError } from './entry-app.ts'
import { nodeBackends } from './node-backends.ts'
import { retentionSweepLine } from './scheduled-retention.ts'

/**
 * `node dist/node/retention.mjs` (from source: `npm run retention`): one retention sweep over
 * every workspace of every tenant in the configured store (VT Code's policy: closed sessions
 * beyond the newest 50 per workspace, or older than 30 days), for a daily cron job or scheduled
 * container beside runtimes whose instances are too short-lived for the server's own pass (Deno
 * Deploy, several Node replicas). Prints the sweep's one JSON line, as the Worker and Lambda
 * log it (`retentionSweepLine`); exit code 1 when a workspace failed.
 */
const deps = await createDeps(process.env, nodeBackends).catch(
  onStartupError((code) => process.exit(code), 2),
)
const now = Date.now()
const result = await sweepRetention(deps.service.sessions.objects, { now })
console.log(retentionSweepLine(result, { now }))
process.exit(result.failed.length > 0 ? 1 : 0)
