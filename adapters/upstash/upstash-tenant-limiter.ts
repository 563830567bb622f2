import type { Clock } from '../../src/ports/clock.ts'
import type { IoDeadline } from '../shared/io-deadline.ts'
import { onTransport } from '../shared/redis-adapter-options.ts'
import { RedisTenantLimiter } from '../shared/redis-tenant-limiter.ts'
import { UpstashCommands, type UpstashConnection } from './upstash-commands.ts'

export type UpstashTenantLimiterOptions = UpstashConnection & {
  /** The coordinator's key prefix (default `turnline:`). */
  namespace?: string
  /** Length of the request window (default one minute). */
  windowMs?: number
  /** Deadline of every call, as the coordinator's (default 3 s per attempt, 15 s per call). */
  deadline?: IoDeadline
  /** Instants of the request window, the day counters and the slot deadlines. */
  clock?: Clock
}

/**
 * TenantLimiter on Upstash Redis (REST), in the coordinator's database: the shared
 * `RedisTenantLimiter` (its request window, today's counters, quotas and turn slots, the scripts
 * the TCP adapter runs too) over `UpstashCommands`. Counting a request is one HTTP round trip.
 */
export class UpstashTenantLimiter extends RedisTenantLimiter<UpstashCommands> {
  constructor(options: UpstashTenantLimiterOptions) {
    super(onTransport('UpstashTenantLimiter', options, UpstashCommands))
  }
}
