import { MemoryCoordinator } from '../adapters/memory/memory-coordinator.ts'
import { UpstashCoordinator } from '../adapters/upstash/upstash-coordinator.ts'
import type { Coordinator } from '../src/ports/coordinator.ts'
import type { IoDeadline } from '../src/ports/io-deadline.ts'
import { ConfigError, type EnvConfig } from './env-config.ts'

/** The coordinator of a deployment: Upstash (REST), plain Redis (TCP) or this process. */
export function coordinatorOf(
  config: EnvConfig,
  options: { redisCoordinator?: ((url: string, deadline: IoDeadline) => Coordinator) | undefined },
  calls: IoDeadline,
  notices: string[],
): Coordinator {
  const url = config.UPSTASH_REDIS_REST_URL
  const token = config.UPSTASH_REDIS_REST_TOKEN
  if (url !== undefined && token !== undefined) {
    return new UpstashCoordinator({ url, token, deadline: calls })
  }
  if (config.REDIS_URL !== undefined) {
    if (!options.redisCoordinator) {
      throw new ConfigError([
        'REDIS_URL: this runtime has no TCP Redis client; use Upstash (UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN)',
      ])
    }
    const shown = new URL(config.REDIS_URL)
    notices.push(`coordination in Redis at ${shown.protocol}//${shown.host} (TCP)`)
    return options.redisCoordinator(config.REDIS_URL, calls)
  }
  notices.push(
    'no UPSTASH_REDIS_REST_URL or REDIS_URL: leases and idempotency records live in this ' +
      'process (fine for one process; run several instances only with a shared Redis)',
  )
  return new MemoryCoordinator()
}
