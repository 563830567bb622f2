import type { Clock } from '../../src/ports/clock.ts'
import {
  DAY_COUNTER_TTL_MS,
  slidingWindowUsed,
  type WindowVerdict,
} from '../../src/ports/tenant-limiter.ts'
import {
  checkDeadline,
  DEFAULT_COORDINATOR_DEADLINE,
  type IoDeadline,
} from '../shared/io-deadline.ts'
import { RedisTenantLimiter } from '../shared/redis-tenant-limiter.ts'
import * as scripts from '../shared/tenant-limiter-scripts.ts'
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
 * TenantLimiter on a plain Redis server over TCP: the algorithm of `@upstash/ratelimit`'s
 * sliding window and today's counters in one script per request (`SLIDING_WINDOW_HIT`), the
 * turn slots in the scripts the Upstash adapter runs too (the shared `RedisTenantLimiter` over
 * `RedisTcpCommands`) — same keys, same meaning, so either adapter can serve one database. Its
 * own connection, beside the coordinator's.
 */
export class RedisTcpTenantLimiter extends RedisTenantLimiter<RedisTcpCommands> {
  constructor(options: RedisTcpTenantLimiterOptions) {
    const deadline = options.deadline ?? DEFAULT_COORDINATOR_DEADLINE
    checkDeadline('RedisTcpTenantLimiter deadline', deadline)
    super({ ...options, deadline, commands: new RedisTcpCommands(options, deadline.attemptMs) })
  }

  async close(): Promise<void> {
    await this.commands.close()
  }

  async hit(tenant: string, perMinute: number | undefined): Promise<WindowVerdict | undefined> {
    const now = this.clock.now()
    const day = this.dayKey(tenant, now)
    if (perMinute === undefined) {
      await this.eval('hit', scripts.COUNT_REQUEST, [day], [String(DAY_COUNTER_TTL_MS)])
      return undefined
    }
    const current = Math.floor(now / this.windowMs)
    const reply = await this.eval(
      'hit',
      scripts.SLIDING_WINDOW_HIT,
      [this.#windowKey(tenant, current), this.#windowKey(tenant, current - 1), day],
      [String(perMinute), String(now), String(this.windowMs), String(DAY_COUNTER_TTL_MS)],
    )
    const [status, after] = scripts.replyArray(reply, 'hit')
    const allowed = scripts.replyInteger(status, 'hit') === 1
    const used = scripts.replyInteger(after, 'hit')
    return {
      allowed,
      limit: perMinute,
      remaining: Math.max(0, perMinute - used),
      resetAtMs: (current + 1) * this.windowMs,
    }
  }

  async peekWindow(tenant: string, perMinute: number): Promise<WindowVerdict> {
    const now = this.clock.now()
    const current = Math.floor(now / this.windowMs)
    const reply = await this.call('peekWindow', () =>
      this.commands.mget(this.#windowKey(tenant, current), this.#windowKey(tenant, current - 1)),
    )
    const [inCurrent, inPrevious] = reply.map((value) =>
      value === null ? 0 : scripts.replyInteger(value, 'peekWindow'),
    )
    const used = slidingWindowUsed(inCurrent ?? 0, inPrevious ?? 0, now, this.windowMs)
    return {
      allowed: used < perMinute,
      limit: perMinute,
      remaining: Math.max(0, perMinute - used),
      resetAtMs: (current + 1) * this.windowMs,
    }
  }

  #windowKey(tenant: string, window: number): string {
    return scripts.limiterKey(this.ns, 'window', tenant, String(window))
  }
}
