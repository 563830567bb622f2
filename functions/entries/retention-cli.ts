import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { RedisTcpCoordinator } from '../../adapters/redis-tcp/redis-tcp-coordinator.ts'
import { RedisTcpTenantLimiter } from '../../adapters/redis-tcp/redis-tcp-tenant-limiter.ts'
import { sweepRetention } from '../../src/store/retention-sweep.ts'
import { createDeps } from '../deps.ts'
import { ConfigError } from '../env-config.ts'

/**
 * `node dist/node/retention.mjs` (from source: `npm run retention`): one retention sweep over
 * every workspace of every tenant in the configured store (VT Code's policy: closed sessions
 * beyond the newest 50 per workspace, or older than 30 days), for a daily cron job or scheduled
 * container beside runtimes whose instances are too short-lived for the server's own pass (Deno
 * Deploy, several Node replicas). Prints one JSON line; exit code 1 when a workspace failed.
 */
const deps = await createDeps(process.env, {
  defaultStore: (root) => new FsObjectStore({ root }),
  redisCoordinator: (url, deadline) => new RedisTcpCoordinator({ url, deadline }),
  redisLimiter: (url, deadline) => new RedisTcpTenantLimiter({ url, deadline }),
}).catch((error: unknown) => {
  if (!(error instanceof ConfigError)) throw error
  console.error(`turnline: ${error.message}`)
  process.exit(2)
})
const result = await sweepRetention(deps.service.sessions.objects, { now: Date.now() })
console.log(JSON.stringify({ msg: 'retention sweep', ...result }))
process.exit(result.failed.length > 0 ? 1 : 0)
