import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { RedisTcpCoordinator } from '../../adapters/redis-tcp/redis-tcp-coordinator.ts'
import { RedisTcpTenantLimiter } from '../../adapters/redis-tcp/redis-tcp-tenant-limiter.ts'
import type { DepsOptions } from '../deps.ts'

/**
 * The backends only a Node process has, for the Node entries (`npm start`, the CLI, check.mjs,
 * retention.mjs): the filesystem store under TURNLINE_DATA_DIR as the default, and the plain-Redis
 * coordinator and per-tenant limiter over TCP for REDIS_URL.
 */
export const nodeBackends: Pick<DepsOptions, 'defaultStore' | 'redisCoordinator' | 'redisLimiter'> =
  {
    defaultStore: (root) => new FsObjectStore({ root }),
    redisCoordinator: (url, keyspace) => new RedisTcpCoordinator({ url, ...keyspace }),
    redisLimiter: (url, keyspace) => new RedisTcpTenantLimiter({ url, ...keyspace }),
  }
