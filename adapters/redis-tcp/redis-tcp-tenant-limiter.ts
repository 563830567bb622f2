import type { Clock } from '../../src/ports/clock.ts'
import type { IoDeadline } from '../shared/io-deadline.ts'
import { onTransport } from '../shared/redis-adapter-options.ts'
import { RedisTenantLimiter } from '../shared/redis-tenant-limiter.ts'
import { RedisTcpCommands, type RedisTcpConnection } from './redis-tcp-commands.ts'

export interface RedisTcpTenantLimiterOptions extends RedisTcpConnection {
  /** `redis://…` or `rediss://…`, the coordinator's REDIS_URL. */
  url: string
  /** The coordinator's key prefix (default `turnline:`). */
  namespace?: string
  /** Length of the request window (default one minute). */
  windowMs?: number
  deadline?: IoDeadline
  clock?: Clock
}

/**
 * TenantLimiter on a plain Redis server over TCP: the shared `RedisTenantLimiter` (the scripts
 * the Upstash adapter runs too) over `RedisTcpCommands` — same keys, same meaning, so either
 * adapter can serve one database. Its own connection, beside the coordinator's.
 */
export class RedisTcpTenantLimiter extends RedisTenantLimiter<RedisTcpCommands> {
  constructor(options: RedisTcpTenantLimiterOptions) {
    super(onTransport('RedisTcpTenantLimiter', options, RedisTcpCommands))
  }

  async close(): Promise<void> {
    await this.commands.close()
  }
}
