import type { Clock } from '../../src/ports/clock.ts'
import {
  DAY_COUNTER_TTL_MS,
  type DayUsage,
  type OutputVerdict,
  REQUEST_WINDOW_MS,
  type Reservation,
  type ReservationVerdict,
  SETTLED_TTL_MS,
  type SlotPool,
  type SlotVerdict,
  type TenantLimiter,
  type UsageCharge,
  type WindowVerdict,
} from '../../src/ports/tenant-limiter.ts'
import { slidingWindowUsed } from '../../src/shared/sliding-window-used.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { utcDay } from '../../src/shared/utc-day.ts'
import type { IoDeadline } from './io-deadline.ts'
import * as quota from './quota-reservation-scripts.ts'
import { callRedis, type RedisCommands } from './redis-commands.ts'
import { DEFAULT_REDIS_PREFIX } from './redis-namespace.ts'
import * as scripts from './tenant-limiter-scripts.ts'

export interface RedisTenantLimiterOptions<C extends RedisCommands> {
  /** How the commands reach Redis (Upstash REST, a TCP connection). */
  commands: C
  /** Deadline of every call, already checked by the adapter (`checkDeadline`). */
  deadline: IoDeadline
  /** The coordinator's key prefix (default `turnline:`). */
  namespace?: string
  /** Length of the request window (default one minute). */
  windowMs?: number
  /** Instants of the day counters and slot deadlines. */
  clock?: Clock
}

/**
 * The TenantLimiter on Redis, whatever carries the commands: today's counters and the turn slots
 * and the request window in the scripts of `tenant-limiter-scripts.ts`, the quotas' reservations
 * in those of `quota-reservation-scripts.ts`: one algorithm, written once, the same keys with the
 * same meaning over every transport. Counting a request is one script (today's counter and the
 * sliding window); reading the window is another.
 */
export class RedisTenantLimiter<C extends RedisCommands = RedisCommands> implements TenantLimiter {
  /** The transport: the adapter's own client behind it. */
  protected readonly commands: C
  protected readonly ns: string
  protected readonly windowMs: number
  protected readonly clock: Clock
  readonly deadline: IoDeadline

  constructor(options: RedisTenantLimiterOptions<C>) {
    this.commands = options.commands
    this.deadline = options.deadline
    this.ns = options.namespace ?? DEFAULT_REDIS_PREFIX
    this.windowMs = options.windowMs ?? REQUEST_WINDOW_MS
    this.clock = options.clock ?? systemClock
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
    const used = scripts.replyInteger(after, 'hit')
    return {
      allowed: scripts.replyInteger(status, 'hit') === 1,
      limit: perMinute,
      remaining: Math.max(0, perMinute - used),
      resetAtMs: (current + 1) * this.windowMs,
    }
  }

  async peekWindow(tenant: string, perMinute: number): Promise<WindowVerdict> {
    const now = this.clock.now()
    const current = Math.floor(now / this.windowMs)
    const reply = await this.eval(
      'peekWindow',
      scripts.PEEK_WINDOW,
      [this.#windowKey(tenant, current), this.#windowKey(tenant, current - 1)],
      [],
    )
    const [inCurrent, inPrevious] = scripts
      .replyArray(reply, 'peekWindow')
      .map((value) => scripts.replyInteger(value, 'peekWindow'))
    const used = slidingWindowUsed(inCurrent ?? 0, inPrevious ?? 0, now, this.windowMs)
    return {
      allowed: used < perMinute,
      limit: perMinute,
      remaining: Math.max(0, perMinute - used),
      resetAtMs: (current + 1) * this.windowMs,
    }
  }

  async acquireSlot(
    tenant: string,
    slot: string,
    limit: number,
    ttlMs: number,
    pool: SlotPool = 'turns',
  ): Promise<SlotVerdict> {
    const now = this.clock.now()
    const reply = await this.eval(
      'acquireSlot',
      scripts.ACQUIRE_SLOT,
      [this.#slotsKey(tenant, pool)],
      [slot, String(limit), String(ttlMs), String(now)],
    )
    return scripts.readSlotVerdict(reply, ttlMs, now)
  }

  async renewSlot(
    tenant: string,
    slot: string,
    ttlMs: number,
    pool: SlotPool = 'turns',
  ): Promise<boolean> {
    const reply = await this.eval(
      'renewSlot',
      scripts.RENEW_SLOT,
      [this.#slotsKey(tenant, pool)],
      [slot, String(ttlMs), String(this.clock.now())],
    )
    return scripts.replyInteger(reply, 'renewSlot') === 1
  }

  async releaseSlot(tenant: string, slot: string, pool: SlotPool = 'turns'): Promise<void> {
    await this.call('releaseSlot', () => this.commands.zrem(this.#slotsKey(tenant, pool), slot))
  }

  async activeSlots(tenant: string, pool: SlotPool = 'turns'): Promise<number> {
    const reply = await this.eval(
      'activeSlots',
      scripts.ACTIVE_SLOTS,
      [this.#slotsKey(tenant, pool)],
      [String(this.clock.now())],
    )
    return scripts.replyInteger(reply, 'activeSlots')
  }

  async reserve(tenant: string, reservation: Reservation): Promise<ReservationVerdict> {
    const now = this.clock.now()
    const reply = await this.eval(
      'reserve',
      quota.RESERVE,
      [this.dayKey(tenant, now), this.#holdsKey(tenant), this.#settledKey(tenant, reservation.id)],
      [
        reservation.id,
        String(reservation.tokens),
        String(reservation.costMicroUsd),
        String(reservation.tokensPerDay ?? -1),
        String(reservation.costMicroUsdPerDay ?? -1),
        String(now),
        String(now + reservation.ttlMs),
        String(reservation.ttlMs),
      ],
    )
    return quota.readReservation(reply)
  }

  async settle(tenant: string, id: string, charge: UsageCharge): Promise<boolean> {
    const reply = await this.eval(
      'settle',
      quota.SETTLE,
      [this.dayKey(tenant, this.clock.now()), this.#holdsKey(tenant), this.#settledKey(tenant, id)],
      [
        id,
        String(charge.tokens),
        String(charge.costMicroUsd),
        String(DAY_COUNTER_TTL_MS),
        String(SETTLED_TTL_MS),
      ],
    )
    return scripts.replyInteger(reply, 'settle') === 1
  }

  async release(tenant: string, id: string): Promise<void> {
    await this.eval('release', quota.RELEASE, [this.#holdsKey(tenant)], [id])
  }

  async usageToday(tenant: string): Promise<DayUsage> {
    const now = this.clock.now()
    const reply = await this.eval(
      'usageToday',
      quota.USAGE,
      [this.dayKey(tenant, now), this.#holdsKey(tenant)],
      [String(now)],
    )
    return quota.readUsage(utcDay(now), reply)
  }

  async keepOutput(
    tenant: string,
    bytes: number,
    limit: number | undefined,
  ): Promise<OutputVerdict> {
    const reply = await this.eval(
      'keepOutput',
      quota.KEEP_OUTPUT,
      [this.dayKey(tenant, this.clock.now())],
      [String(bytes), String(limit ?? -1), String(DAY_COUNTER_TTL_MS)],
    )
    return quota.readOutputVerdict(reply)
  }

  async returnOutput(tenant: string, bytes: number): Promise<void> {
    const day = this.dayKey(tenant, this.clock.now())
    await this.eval('returnOutput', quota.RETURN_OUTPUT, [day], [String(bytes)])
  }

  /** Today's counters of `tenant` (the UTC day of `nowMs`). */
  protected dayKey(tenant: string, nowMs: number): string {
    return scripts.limiterKey(this.ns, 'day', tenant, utcDay(nowMs))
  }

  #windowKey(tenant: string, window: number): string {
    return scripts.limiterKey(this.ns, 'window', tenant, String(window))
  }

  /** Turn slots keep the key they always had; followed streams' have their own set. */
  #slotsKey(tenant: string, pool: SlotPool): string {
    return scripts.limiterKey(this.ns, pool === 'turns' ? 'slots' : 'followSlots', tenant)
  }

  #holdsKey(tenant: string): string {
    return scripts.limiterKey(this.ns, 'holds', tenant)
  }

  #settledKey(tenant: string, id: string): string {
    return scripts.limiterKey(this.ns, 'settled', tenant, id)
  }

  protected eval(
    operation: string,
    script: string,
    keys: string[],
    args: string[],
  ): Promise<unknown> {
    return this.call(operation, () => this.commands.eval(script, keys, args))
  }

  /** One call under the deadline; a resend repeats exactly the same command. */
  protected call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return callRedis(this.deadline, this.commands, operation, run)
  }
}
