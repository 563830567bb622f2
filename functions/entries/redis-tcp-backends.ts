import type { DepsOptions } from '../deps.ts'

type RedisTcpOption = 'redisCoordinator' | 'redisLimiter' | 'redisThrottle'

/**
 * The plain-Redis clients for REDIS_URL (coordinator, per-tenant limiter, failed-authentication
 * counters over TCP) of the entries that have TCP sockets (Node, Lambda), passed as
 * `DepsOptions.redisTcp`: imported only when REDIS_URL is set, since ioredis under them costs a
 * start without Redis ≈ 80 ms of CPU (docs/performance.md, cold start).
 */
export async function redisTcpBackends(): Promise<Pick<DepsOptions, RedisTcpOption>> {
  const [coordinator, limiter, throttle] = await Promise.all([
    import('../../adapters/redis-tcp/redis-tcp-coordinator.ts'),
    import('../../adapters/redis-tcp/redis-tcp-tenant-limiter.ts'),
    import('../../adapters/redis-tcp/redis-tcp-failure-throttle.ts'),
  ])
  return {
    redisCoordinator: (url, keyspace) => new coordinator.RedisTcpCoordinator({ url, ...keyspace }),
    redisLimiter: (url, keyspace) => new limiter.RedisTcpTenantLimiter({ url, ...keyspace }),
    redisThrottle: (url, keyspace) => new throttle.RedisTcpFailureThrottle({ url, ...keyspace }),
  }
}
