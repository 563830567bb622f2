import { Redis } from 'ioredis'
import { type Clock, systemClock } from '../../src/ports/clock.ts'
import {
  checkDeadline,
  DEFAULT_COORDINATOR_DEADLINE,
  type IoDeadline,
  withDeadline,
} from '../../src/ports/io-deadline.ts'
import {
  DAY_COUNTER_TTL_MS,
  type DayUsage,
  REQUEST_WINDOW_MS,
  type SlotVerdict,
  slidingWindowUsed,
  type TenantLimiter,
  type UsageCharge,
  utcDay,
  type WindowVerdict,
} from '../../src/ports/tenant-limiter.ts'
import * as scripts from '../../src/ports/tenant-limiter-scripts.ts'
import { toRedisTcpError } from './redis-tcp-errors.ts'

export interface RedisTcpTenantLimiterOptions {
  /** `redis://…` or `rediss://…`, the coordinator's REDIS_URL. */
  url: string
  /** The coordinator's key prefix (default `turnline:`). */
  namespace?: string
  /** Length of the request window (default one minute). */
  windowMs?: number
  deadline?: IoDeadline
  clock?: Clock
  connectTimeoutMs?: number
}

/**
 * TenantLimiter on a plain Redis server over TCP: the algorithm of `@upstash/ratelimit`'s
 * sliding window and today's counters in one script per request (`SLIDING_WINDOW_HIT`), the
 * turn slots in the scripts the Upstash adapter runs too — same keys, same meaning, so either
 * adapter can serve one database. Its own connection, beside the coordinator's.
 */
export class RedisTcpTenantLimiter implements TenantLimiter {
  readonly #redis: Redis
  readonly #ns: string
  readonly #windowMs: number
  readonly #clock: Clock
  readonly deadline: IoDeadline
  #lastConnectionError: string | undefined

  constructor(options: RedisTcpTenantLimiterOptions) {
    this.deadline = options.deadline ?? DEFAULT_COORDINATOR_DEADLINE
    checkDeadline('RedisTcpTenantLimiter deadline', this.deadline)
    this.#redis = new Redis(options.url, {
      lazyConnect: true,
      connectTimeout: options.connectTimeoutMs ?? 5000,
      commandTimeout: this.deadline.attemptMs,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    })
    this.#redis.on('error', (error: Error) => {
      this.#lastConnectionError = error.message
    })
    this.#redis.on('ready', () => {
      this.#lastConnectionError = undefined
    })
    this.#ns = options.namespace ?? 'turnline:'
    this.#windowMs = options.windowMs ?? REQUEST_WINDOW_MS
    this.#clock = options.clock ?? systemClock
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect())
  }

  async hit(tenant: string, perMinute: number | undefined): Promise<WindowVerdict | undefined> {
    const now = this.#clock.now()
    const day = scripts.limiterKey(this.#ns, 'day', tenant, utcDay(now))
    if (perMinute === undefined) {
      await this.#eval('hit', scripts.COUNT_REQUEST, [day], [String(DAY_COUNTER_TTL_MS)])
      return undefined
    }
    const current = Math.floor(now / this.#windowMs)
    const reply = await this.#eval(
      'hit',
      scripts.SLIDING_WINDOW_HIT,
      [this.#windowKey(tenant, current), this.#windowKey(tenant, current - 1), day],
      [String(perMinute), String(now), String(this.#windowMs), String(DAY_COUNTER_TTL_MS)],
    )
    const [status, after] = scripts.replyArray(reply, 'hit')
    const allowed = scripts.replyInteger(status, 'hit') === 1
    const used = scripts.replyInteger(after, 'hit')
    return {
      allowed,
      limit: perMinute,
      remaining: Math.max(0, perMinute - used),
      resetAtMs: (current + 1) * this.#windowMs,
    }
  }

  async peekWindow(tenant: string, perMinute: number): Promise<WindowVerdict> {
    const now = this.#clock.now()
    const current = Math.floor(now / this.#windowMs)
    const reply = await this.#call('peekWindow', () =>
      this.#redis.mget(this.#windowKey(tenant, current), this.#windowKey(tenant, current - 1)),
    )
    const [inCurrent, inPrevious] = reply.map((value) =>
      value === null ? 0 : scripts.replyInteger(value, 'peekWindow'),
    )
    const used = slidingWindowUsed(inCurrent ?? 0, inPrevious ?? 0, now, this.#windowMs)
    return {
      allowed: used < perMinute,
      limit: perMinute,
      remaining: Math.max(0, perMinute - used),
      resetAtMs: (current + 1) * this.#windowMs,
    }
  }

  async acquireSlot(
    tenant: string,
    slot: string,
    limit: number,
    ttlMs: number,
  ): Promise<SlotVerdict> {
    const reply = await this.#eval(
      'acquireSlot',
      scripts.ACQUIRE_SLOT,
      [this.#slotsKey(tenant)],
      [slot, String(limit), String(ttlMs), String(this.#clock.now())],
    )
    return scripts.readSlotVerdict(reply)
  }

  async renewSlot(tenant: string, slot: string, ttlMs: number): Promise<boolean> {
    const reply = await this.#eval(
      'renewSlot',
      scripts.RENEW_SLOT,
      [this.#slotsKey(tenant)],
      [slot, String(ttlMs), String(this.#clock.now())],
    )
    return scripts.replyInteger(reply, 'renewSlot') === 1
  }

  async releaseSlot(tenant: string, slot: string): Promise<void> {
    await this.#call('releaseSlot', () => this.#redis.zrem(this.#slotsKey(tenant), slot))
  }

  async activeSlots(tenant: string): Promise<number> {
    const reply = await this.#eval(
      'activeSlots',
      scripts.ACTIVE_SLOTS,
      [this.#slotsKey(tenant)],
      [String(this.#clock.now())],
    )
    return scripts.replyInteger(reply, 'activeSlots')
  }

  async charge(tenant: string, charge: UsageCharge): Promise<void> {
    const day = scripts.limiterKey(this.#ns, 'day', tenant, utcDay(this.#clock.now()))
    await this.#eval(
      'charge',
      scripts.CHARGE,
      [day],
      [String(charge.tokens), String(charge.costMicroUsd), String(DAY_COUNTER_TTL_MS)],
    )
  }

  async usageToday(tenant: string): Promise<DayUsage> {
    const day = utcDay(this.#clock.now())
    const reply = await this.#call('usageToday', () =>
      this.#redis.call('HGETALL', scripts.limiterKey(this.#ns, 'day', tenant, day)),
    )
    return scripts.readDayUsage(day, reply)
  }

  #windowKey(tenant: string, window: number): string {
    return scripts.limiterKey(this.#ns, 'window', tenant, String(window))
  }

  #slotsKey(tenant: string): string {
    return scripts.limiterKey(this.#ns, 'slots', tenant)
  }

  #eval(operation: string, script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#call(operation, () => this.#redis.eval(script, keys.length, ...keys, ...args))
  }

  #call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return withDeadline(
      {
        deadline: this.deadline,
        code: 'coordinator_unavailable',
        service: 'the coordinator',
        operation,
      },
      async () => {
        try {
          return await run()
        } catch (error) {
          throw toRedisTcpError(error, operation, this.#lastConnectionError)
        }
      },
    )
  }
}
