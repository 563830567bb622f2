import { Ratelimit } from '@upstash/ratelimit'
import type { Redis } from '@upstash/redis'
import type { Clock } from '../../src/ports/clock.ts'
import { DAY_COUNTER_TTL_MS, type WindowVerdict } from '../../src/ports/tenant-limiter.ts'
import {
  checkDeadline,
  DEFAULT_COORDINATOR_DEADLINE,
  type IoDeadline,
} from '../shared/io-deadline.ts'
import { RedisTenantLimiter } from '../shared/redis-tenant-limiter.ts'
import * as scripts from '../shared/tenant-limiter-scripts.ts'
import { UpstashCommands } from './upstash-commands.ts'

export type UpstashTenantLimiterOptions = (
  | { url: string; token: string; enableAutoPipelining?: boolean }
  | { client: Redis }
) & {
  /** The coordinator's key prefix (default `turnline:`). */
  namespace?: string
  /** Length of the request window (default one minute). */
  windowMs?: number
  /** Deadline of every call, as the coordinator's (default 3 s per attempt, 15 s per call). */
  deadline?: IoDeadline
  /** Instants of the day counters and slot deadlines (the request window uses `Date.now`). */
  clock?: Clock
}

/**
 * TenantLimiter on Upstash Redis (REST), in the coordinator's database. The request window is
 * `@upstash/ratelimit`'s `slidingWindow` (one limiter per distinct limit, all on the same keys,
 * so a tenant whose limit changes keeps its count); today's counters and the turn slots are the
 * shared `RedisTenantLimiter` over `UpstashCommands`. Counting a request is one HTTP
 * round trip: the window check and today's counter are sent in the same tick and auto-pipelined.
 *
 * Pinned to `@upstash/ratelimit` 2.0.8: from 2.1.0 its scripts start with
 * `#!lua flags=allow-key-locking`, an Upstash-only flag that open-source Redis refuses, so a
 * REST front over plain Redis (and the test suite's proxy) could not run them.
 */
export class UpstashTenantLimiter extends RedisTenantLimiter<UpstashCommands> {
  readonly #limiters = new Map<number, Ratelimit>()

  constructor(options: UpstashTenantLimiterOptions) {
    const deadline = options.deadline ?? DEFAULT_COORDINATOR_DEADLINE
    checkDeadline('UpstashTenantLimiter deadline', deadline)
    super({ ...options, deadline, commands: new UpstashCommands(options, deadline.attemptMs) })
  }

  async hit(tenant: string, perMinute: number | undefined): Promise<WindowVerdict | undefined> {
    const day = this.dayKey(tenant, this.clock.now())
    const counted = this.eval('hit', scripts.COUNT_REQUEST, [day], [String(DAY_COUNTER_TTL_MS)])
    if (perMinute === undefined) {
      await counted
      return undefined
    }
    const limited = this.call('hit', () => this.#limiter(perMinute).limit(tenant))
    const [, result] = await Promise.all([counted, limited])
    return {
      allowed: result.success,
      limit: result.limit,
      remaining: result.remaining,
      resetAtMs: result.reset,
    }
  }

  async peekWindow(tenant: string, perMinute: number): Promise<WindowVerdict> {
    const result = await this.call('peekWindow', () =>
      this.#limiter(perMinute).getRemaining(tenant),
    )
    return {
      allowed: result.remaining > 0,
      limit: perMinute,
      remaining: result.remaining,
      resetAtMs: result.reset,
    }
  }

  #limiter(limit: number): Ratelimit {
    let limiter = this.#limiters.get(limit)
    if (!limiter) {
      limiter = new Ratelimit({
        redis: this.commands.client,
        limiter: Ratelimit.slidingWindow(limit, `${this.windowMs} ms`),
        prefix: `${this.ns}rl:rpm`,
        // The limit may change when the key registry reloads: no in-process block cache.
        ephemeralCache: false,
        analytics: false,
        // Our deadline bounds the call instead (the library would let it pass on timeout).
        timeout: 0,
      })
      this.#limiters.set(limit, limiter)
    }
    return limiter
  }
}
