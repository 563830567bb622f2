import type { Clock } from '../../src/ports/clock.ts'
import type { IoDeadline } from '../shared/io-deadline.ts'
import { onTransport } from '../shared/redis-adapter-options.ts'
import { RedisFailureThrottle } from '../shared/redis-failure-throttle.ts'
import { UpstashCommands, type UpstashConnection } from './upstash-commands.ts'

export type UpstashFailureThrottleOptions = UpstashConnection & {
  /** The coordinator's key prefix (default `turnline:`). */
  namespace?: string
  /** Deadline of every call, as the coordinator's (default 3 s per attempt, 15 s per call). */
  deadline?: IoDeadline
  clock?: Clock
}

/** The FailureThrottle on Upstash Redis (REST), in the coordinator's database. */
export class UpstashFailureThrottle extends RedisFailureThrottle<UpstashCommands> {
  constructor(options: UpstashFailureThrottleOptions) {
    super(onTransport('UpstashFailureThrottle', options, UpstashCommands))
  }
}
