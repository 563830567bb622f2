import type { IoDeadline } from '../shared/io-deadline.ts'
import { onTransport } from '../shared/redis-adapter-options.ts'
import { RedisCoordinator } from '../shared/redis-coordinator.ts'
import type { RedisCoordinatorSettings } from '../shared/redis-coordinator-options.ts'
import { UpstashCommands, type UpstashConnection } from './upstash-commands.ts'

export type UpstashCoordinatorOptions = UpstashConnection &
  RedisCoordinatorSettings & {
    /**
     * Deadline of every call: an attempt is abandoned after `attemptMs` (a client this adapter
     * builds also aborts the HTTP request then) and resent while `budgetMs` lasts — every script
     * is safe to resend — then the call fails `coordinator_unavailable` (503, Retry-After).
     * Default 3 s per attempt, 15 s per call.
     */
    deadline?: IoDeadline
  }

/**
 * Coordinator on Upstash Redis (REST): the shared `RedisCoordinator` over `UpstashCommands`.
 * Every call is exactly one HTTP request: one Lua script (EVAL, so no NOSCRIPT fallback round
 * trip) or one plain read. An ordinary turn is `beginTurn` plus `endTurn`: two round trips.
 * Requests are counted, an injected client's too.
 */
export class UpstashCoordinator extends RedisCoordinator<UpstashCommands> {
  constructor(options: UpstashCoordinatorOptions) {
    super(onTransport('UpstashCoordinator', options, UpstashCommands))
  }

  /** HTTP requests sent by this adapter's client so far (each is one round trip). */
  get requestCount(): number {
    return this.commands.requestCount
  }
}
