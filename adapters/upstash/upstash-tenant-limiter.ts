import { Ratelimit } from '@upstash/ratelimit'
import { Redis } from '@upstash/redis'
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
  type TenantLimiter,
  type UsageCharge,
  utcDay,
  type WindowVerdict,
} from '../../src/ports/tenant-limiter.ts'
import * as scripts from '../../src/ports/tenant-limiter-scripts.ts'
import { toCoordinatorError } from './upstash-errors.ts'

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
 * shared scripts of `src/ports/tenant-limiter-scripts.ts`. Counting a request is one HTTP
 * round trip: the window check and today's counter are sent in the same tick and auto-pipelined.
 *
 * Pinned to `@upstash/ratelimit` 2.0.8: from 2.1.0 its scripts start with
 * `#!lua flags=allow-key-locking`, an Upstash-only flag that open-source Redis refuses, so a
 * REST front over plain Redis (and the test suite's proxy) could not run them.
 */
export class UpstashTenantLimiter implements TenantLimiter {
  readonly #redis: Redis
  readonly #ns: string
  readonly #windowMs: number
  readonly #clock: Clock
  readonly #limiters = new Map<number, Ratelimit>()
  readonly deadline: IoDeadline

  constructor(options: UpstashTenantLimiterOptions) {
    this.deadline = options.deadline ?? DEFAULT_COORDINATOR_DEADLINE
    checkDeadline('UpstashTenantLimiter deadline', this.deadline)
    const attemptMs = this.deadline.attemptMs
    this.#redis =
      'client' in options
        ? options.client
        : new Redis({
            url: options.url,
            token: options.token,
            automaticDeserialization: false,
            enableTelemetry: false,
            signal: () => AbortSignal.timeout(attemptMs),
            ...(options.enableAutoPipelining === undefined
              ? {}
              : { enableAutoPipelining: options.enableAutoPipelining }),
          })
    this.#ns = options.namespace ?? 'turnline:'
    this.#windowMs = options.windowMs ?? REQUEST_WINDOW_MS
    this.#clock = options.clock ?? systemClock
  }

  async hit(tenant: string, perMinute: number | undefined): Promise<WindowVerdict | undefined> {
    const day = this.#dayKey(tenant)
    const counted = this.#call('hit', () =>
      this.#redis.eval(scripts.COUNT_REQUEST, [day], [String(DAY_COUNTER_TTL_MS)]),
    )
    if (perMinute === undefined) {
      await counted
      return undefined
    }
    const limited = this.#call('hit', () => this.#limiter(perMinute).limit(tenant))
    const [, result] = await Promise.all([counted, limited])
    return {
      allowed: result.success,
      limit: result.limit,
      remaining: result.remaining,
      resetAtMs: result.reset,
    }
  }

  async peekWindow(tenant: string, perMinute: number): Promise<WindowVerdict> {
    const result = await this.#call('peekWindow', () =>
      this.#limiter(perMinute).getRemaining(tenant),
    )
    return {
      allowed: result.remaining > 0,
      limit: perMinute,
      remaining: result.remaining,
      resetAtMs: result.reset,
    }
  }

  async acquireSlot(
    tenant: string,
    slot: string,
    limit: number,
    ttlMs: number,
  ): Promise<SlotVerdict> {
    const reply = await this.#call('acquireSlot', () =>
      this.#redis.eval(
        scripts.ACQUIRE_SLOT,
        [this.#slotsKey(tenant)],
        [slot, String(limit), String(ttlMs), String(this.#clock.now())],
      ),
    )
    return scripts.readSlotVerdict(reply)
  }

  async renewSlot(tenant: string, slot: string, ttlMs: number): Promise<boolean> {
    const reply = await this.#call('renewSlot', () =>
      this.#redis.eval(
        scripts.RENEW_SLOT,
        [this.#slotsKey(tenant)],
        [slot, String(ttlMs), String(this.#clock.now())],
      ),
    )
    return scripts.replyInteger(reply, 'renewSlot') === 1
  }

  async releaseSlot(tenant: string, slot: string): Promise<void> {
    await this.#call('releaseSlot', () => this.#redis.zrem(this.#slotsKey(tenant), slot))
  }

  async activeSlots(tenant: string): Promise<number> {
    const reply = await this.#call('activeSlots', () =>
      this.#redis.eval(scripts.ACTIVE_SLOTS, [this.#slotsKey(tenant)], [String(this.#clock.now())]),
    )
    return scripts.replyInteger(reply, 'activeSlots')
  }

  async charge(tenant: string, charge: UsageCharge): Promise<void> {
    await this.#call('charge', () =>
      this.#redis.eval(
        scripts.CHARGE,
        [this.#dayKey(tenant)],
        [String(charge.tokens), String(charge.costMicroUsd), String(DAY_COUNTER_TTL_MS)],
      ),
    )
  }

  async usageToday(tenant: string): Promise<DayUsage> {
    const day = utcDay(this.#clock.now())
    const reply = await this.#call('usageToday', () =>
      this.#redis.hgetall(scripts.limiterKey(this.#ns, 'day', tenant, day)),
    )
    return scripts.readDayUsage(day, reply)
  }

  #limiter(limit: number): Ratelimit {
    let limiter = this.#limiters.get(limit)
    if (!limiter) {
      limiter = new Ratelimit({
        redis: this.#redis,
        limiter: Ratelimit.slidingWindow(limit, `${this.#windowMs} ms`),
        prefix: `${this.#ns}rl:rpm`,
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

  #dayKey(tenant: string): string {
    return scripts.limiterKey(this.#ns, 'day', tenant, utcDay(this.#clock.now()))
  }

  #slotsKey(tenant: string): string {
    return scripts.limiterKey(this.#ns, 'slots', tenant)
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
          throw toCoordinatorError(error, operation)
        }
      },
    )
  }
}
