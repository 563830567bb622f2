import type { Clock } from '../../src/ports/clock.ts'
import type { IoDeadline } from '../shared/io-deadline.ts'
import { onTransport } from '../shared/redis-adapter-options.ts'
import { RedisFailureThrottle } from '../shared/redis-failure-throttle.ts'
import { RedisTcpCommands, type RedisTcpConnection } from './redis-tcp-commands.ts'

export interface RedisTcpFailureThrottleOptions extends RedisTcpConnection {
  /** The coordinator's key prefix (default `turnline:`). */
  namespace?: string
  deadline?: IoDeadline
  clock?: Clock
}

/**
 * The FailureThrottle on a plain Redis server over TCP (REDIS_URL), its own connection beside
 * the coordinator's, opened on the first failure.
 */
export class RedisTcpFailureThrottle extends RedisFailureThrottle<RedisTcpCommands> {
  constructor(options: RedisTcpFailureThrottleOptions) {
    super(onTransport('RedisTcpFailureThrottle', options, RedisTcpCommands))
  }

  async close(): Promise<void> {
    await this.commands.close()
  }
}
