import type { Clock, Ids } from '../../src/ports/clock.ts'
import type { IoDeadline } from './io-deadline.ts'
import type { RedisCommands } from './redis-commands.ts'

/** What every Redis coordinator is configured with, whatever carries its commands. */
export interface RedisCoordinatorSettings {
  /** Prefix of every key (`redisKeyPrefix`): `turnline:` (the default) → `turnline:lease:<sid>`. */
  namespace?: string
  ids?: Ids
  /** Stamps lease tokens with their acquisition time (`stampedLeaseId`). Default the system's. */
  clock?: Clock
  /** Lifetime of `tip:<sid>`, refreshed on every write; 0 keeps it forever. Default 30 days. */
  tipTtlSeconds?: number
}

export interface RedisCoordinatorOptions<C extends RedisCommands> extends RedisCoordinatorSettings {
  /** How the commands reach Redis (Upstash REST, a TCP connection). */
  commands: C
  /** Deadline of every call, already checked by the adapter (`checkDeadline`). */
  deadline: IoDeadline
}
