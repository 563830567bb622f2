import type { Clock } from '../../src/ports/clock.ts'
import {
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
import { firstFreeRetryAfter, leaseAcquiredAt } from '../../src/shared/held-retry-after.ts'
import { slidingWindowUsed } from '../../src/shared/sliding-window-used.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { utcDay } from '../../src/shared/utc-day.ts'

export interface MemoryTenantLimiterOptions {
  clock?: Clock
  /** Length of the request window (default one minute). */
  windowMs?: number
}

/**
 * The TenantLimiter of one process (the memory coordinator, the embedded single-node server):
 * the same semantics as the Redis adapters, on Maps. Counters of past days and windows are
 * dropped as new ones start, so memory stays bounded by the tenants seen today.
 */
export class MemoryTenantLimiter implements TenantLimiter {
  readonly #clock: Clock
  readonly #windowMs: number
  /** tenant → window number → requests counted in it. */
  readonly #windows = new Map<string, Map<number, number>>()
  /** tenant → today's counters. */
  readonly #days = new Map<string, DayUsage>()
  /** tenant → slot → deadline (epoch ms). */
  readonly #slots: Record<SlotPool, Map<string, Map<string, number>>> = {
    turns: new Map(),
    follows: new Map(),
  }
  /** tenant → call id → its hold. */
  readonly #holds = new Map<string, Map<string, Hold>>()
  /** tenant → settled call id → until when it is remembered (in insertion order). */
  readonly #settled = new Map<string, Map<string, number>>()

  constructor(options: MemoryTenantLimiterOptions = {}) {
    this.#clock = options.clock ?? systemClock
    this.#windowMs = options.windowMs ?? REQUEST_WINDOW_MS
  }

  async hit(tenant: string, perMinute: number | undefined): Promise<WindowVerdict | undefined> {
    this.#day(tenant).requests += 1
    if (perMinute === undefined) return undefined
    const verdict = this.#window(tenant, perMinute)
    if (verdict.allowed) {
      const now = this.#clock.now()
      const windows = this.#windowsOf(tenant)
      const current = Math.floor(now / this.#windowMs)
      windows.set(current, (windows.get(current) ?? 0) + 1)
      verdict.remaining -= 1
    }
    return verdict
  }

  async peekWindow(tenant: string, perMinute: number): Promise<WindowVerdict> {
    return this.#window(tenant, perMinute)
  }

  async acquireSlot(
    tenant: string,
    slot: string,
    limit: number,
    ttlMs: number,
    pool: SlotPool = 'turns',
  ): Promise<SlotVerdict> {
    const now = this.#clock.now()
    const slots = this.#liveSlots(tenant, now, pool)
    if (!slots.has(slot) && slots.size >= limit) {
      const held = [...slots].map(([id, deadline]) => ({
        remainingMs: deadline - now,
        ttlMs,
        acquiredAtMs: leaseAcquiredAt(id),
      }))
      const { retryAfterMs } = firstFreeRetryAfter(held, now)
      return { status: 'full', active: slots.size, retryAfterMs }
    }
    slots.set(slot, now + ttlMs)
    return { status: 'acquired', active: slots.size }
  }

  async renewSlot(
    tenant: string,
    slot: string,
    ttlMs: number,
    pool: SlotPool = 'turns',
  ): Promise<boolean> {
    const now = this.#clock.now()
    const slots = this.#liveSlots(tenant, now, pool)
    if (!slots.has(slot)) return false
    slots.set(slot, now + ttlMs)
    return true
  }

  async releaseSlot(tenant: string, slot: string, pool: SlotPool = 'turns'): Promise<void> {
    this.#slots[pool].get(tenant)?.delete(slot)
  }

  async activeSlots(tenant: string, pool: SlotPool = 'turns'): Promise<number> {
    return this.#liveSlots(tenant, this.#clock.now(), pool).size
  }

  async reserve(tenant: string, reservation: Reservation): Promise<ReservationVerdict> {
    const now = this.#clock.now()
    if (this.#settledOf(tenant, now).has(reservation.id)) return { status: 'settled' }
    const holds = this.#liveHolds(tenant, now)
    if (!holds.has(reservation.id)) {
      const day = this.#day(tenant)
      const held = sumHolds(holds)
      const { tokensPerDay: tokenLimit, costMicroUsdPerDay: costLimit } = reservation
      if (tokenLimit !== undefined && day.tokens + held.tokens >= tokenLimit) {
        return { status: 'refused', quota: 'tokens', used: day.tokens, reserved: held.tokens }
      }
      if (costLimit !== undefined && day.costMicroUsd + held.costMicroUsd >= costLimit) {
        return {
          status: 'refused',
          quota: 'cost',
          used: day.costMicroUsd,
          reserved: held.costMicroUsd,
        }
      }
    }
    holds.set(reservation.id, {
      deadline: now + reservation.ttlMs,
      tokens: reservation.tokens,
      costMicroUsd: reservation.costMicroUsd,
    })
    return { status: 'held' }
  }

  async settle(tenant: string, id: string, charge: UsageCharge): Promise<boolean> {
    const now = this.#clock.now()
    this.#holds.get(tenant)?.delete(id)
    const settled = this.#settledOf(tenant, now)
    if (settled.has(id)) return false
    settled.set(id, now + SETTLED_TTL_MS)
    const day = this.#day(tenant)
    day.tokens += charge.tokens
    day.costMicroUsd += charge.costMicroUsd
    return true
  }

  async release(tenant: string, id: string): Promise<void> {
    this.#holds.get(tenant)?.delete(id)
  }

  async usageToday(tenant: string): Promise<DayUsage> {
    const held = sumHolds(this.#liveHolds(tenant, this.#clock.now()))
    return {
      ...this.#day(tenant),
      reservedTokens: held.tokens,
      reservedCostMicroUsd: held.costMicroUsd,
    }
  }

  async keepOutput(
    tenant: string,
    bytes: number,
    limit: number | undefined,
  ): Promise<OutputVerdict> {
    const day = this.#day(tenant)
    if (limit !== undefined && day.outputBytes + bytes > limit) {
      return { status: 'refused', used: day.outputBytes }
    }
    day.outputBytes += bytes
    return { status: 'counted' }
  }

  async returnOutput(tenant: string, bytes: number): Promise<void> {
    const day = this.#day(tenant)
    day.outputBytes = Math.max(0, day.outputBytes - bytes)
  }

  #window(tenant: string, limit: number): WindowVerdict {
    const now = this.#clock.now()
    const current = Math.floor(now / this.#windowMs)
    const windows = this.#windowsOf(tenant)
    for (const number of windows.keys()) if (number < current - 1) windows.delete(number)
    const used = slidingWindowUsed(
      windows.get(current) ?? 0,
      windows.get(current - 1) ?? 0,
      now,
      this.#windowMs,
    )
    return {
      allowed: used < limit,
      limit,
      remaining: Math.max(0, limit - used),
      resetAtMs: (current + 1) * this.#windowMs,
    }
  }

  #windowsOf(tenant: string): Map<number, number> {
    return ofTenant(this.#windows, tenant)
  }

  #day(tenant: string): DayUsage {
    const day = utcDay(this.#clock.now())
    let usage = this.#days.get(tenant)
    if (!usage || usage.day !== day) {
      usage = {
        day,
        requests: 0,
        tokens: 0,
        costMicroUsd: 0,
        reservedTokens: 0,
        reservedCostMicroUsd: 0,
        outputBytes: 0,
      }
      this.#days.set(tenant, usage)
    }
    return usage
  }

  #liveHolds(tenant: string, now: number): Map<string, Hold> {
    const holds = ofTenant(this.#holds, tenant)
    for (const [id, hold] of holds) if (hold.deadline <= now) holds.delete(id)
    return holds
  }

  /** The settled call ids still remembered (they expire in the order they were settled). */
  #settledOf(tenant: string, now: number): Map<string, number> {
    const settled = ofTenant(this.#settled, tenant)
    for (const [id, until] of settled) {
      if (until > now) break
      settled.delete(id)
    }
    return settled
  }

  #liveSlots(tenant: string, now: number, pool: SlotPool): Map<string, number> {
    const slots = ofTenant(this.#slots[pool], tenant)
    for (const [slot, deadline] of slots) if (deadline <= now) slots.delete(slot)
    return slots
  }
}

/** The tenant's own map in `maps`, made on first use. */
function ofTenant<K, V>(maps: Map<string, Map<K, V>>, tenant: string): Map<K, V> {
  let map = maps.get(tenant)
  if (!map) {
    map = new Map()
    maps.set(tenant, map)
  }
  return map
}

interface Hold {
  deadline: number
  tokens: number
  costMicroUsd: number
}

function sumHolds(holds: Map<string, Hold>): { tokens: number; costMicroUsd: number } {
  let tokens = 0
  let costMicroUsd = 0
  for (const hold of holds.values()) {
    tokens += hold.tokens
    costMicroUsd += hold.costMicroUsd
  }
  return { tokens, costMicroUsd }
}
