import { type Clock, systemClock } from '../../src/ports/clock.ts'
import {
  type DayUsage,
  REQUEST_WINDOW_MS,
  type SlotVerdict,
  slidingWindowUsed,
  type TenantLimiter,
  type UsageCharge,
  utcDay,
  type WindowVerdict,
} from '../../src/ports/tenant-limiter.ts'

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
  readonly #slots = new Map<string, Map<string, number>>()

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
  ): Promise<SlotVerdict> {
    const now = this.#clock.now()
    const slots = this.#liveSlots(tenant, now)
    if (!slots.has(slot) && slots.size >= limit) {
      const earliest = Math.min(...slots.values())
      return { status: 'full', active: slots.size, retryAfterMs: Math.max(1, earliest - now) }
    }
    slots.set(slot, now + ttlMs)
    return { status: 'acquired', active: slots.size }
  }

  async renewSlot(tenant: string, slot: string, ttlMs: number): Promise<boolean> {
    const now = this.#clock.now()
    const slots = this.#liveSlots(tenant, now)
    if (!slots.has(slot)) return false
    slots.set(slot, now + ttlMs)
    return true
  }

  async releaseSlot(tenant: string, slot: string): Promise<void> {
    this.#slots.get(tenant)?.delete(slot)
  }

  async activeSlots(tenant: string): Promise<number> {
    return this.#liveSlots(tenant, this.#clock.now()).size
  }

  async charge(tenant: string, charge: UsageCharge): Promise<void> {
    const day = this.#day(tenant)
    day.tokens += charge.tokens
    day.costMicroUsd += charge.costMicroUsd
  }

  async usageToday(tenant: string): Promise<DayUsage> {
    return { ...this.#day(tenant) }
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
    let windows = this.#windows.get(tenant)
    if (!windows) {
      windows = new Map()
      this.#windows.set(tenant, windows)
    }
    return windows
  }

  #day(tenant: string): DayUsage {
    const day = utcDay(this.#clock.now())
    let usage = this.#days.get(tenant)
    if (!usage || usage.day !== day) {
      usage = { day, requests: 0, tokens: 0, costMicroUsd: 0 }
      this.#days.set(tenant, usage)
    }
    return usage
  }

  #liveSlots(tenant: string, now: number): Map<string, number> {
    let slots = this.#slots.get(tenant)
    if (!slots) {
      slots = new Map()
      this.#slots.set(tenant, slots)
    }
    for (const [slot, deadline] of slots) if (deadline <= now) slots.delete(slot)
    return slots
  }
}
