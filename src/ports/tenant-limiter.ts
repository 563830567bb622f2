/**
 * TenantLimiter: the shared counters behind per-tenant rate limits and quotas, kept where the
 * coordinator keeps its state so every instance sees the same numbers — `adapters/upstash`
 * (REST) and `adapters/redis-tcp` (TCP), both the one Redis limiter of adapters/shared with its
 * scripts, and `adapters/memory` (one process).
 *
 * - the request window: a sliding window of `windowMs` (one minute in production) — two fixed
 *   windows, the previous one weighted by how much of it still overlaps — so a burst at a window
 *   edge cannot double the rate. A refused request is not counted in the window.
 * - today's counters per UTC day: requests (every one presented, refused ones too), model tokens
 *   and cost (micro-USD, integers). They expire two days after their day began.
 * - reservations: a model call's estimate is held against the daily token and cost quotas
 *   before the call is made, atomically with the check (`reserve`), and replaced by the
 *   provider's usage once it answers (`settle`) or dropped when it failed (`release`). A hold
 *   nobody settles (a crashed instance) lapses at its deadline; a settle counts once per call id.
 * - kept output: the bytes of tool output kept as output artifacts today, counted before they
 *   are stored, atomically with the check against the tenant's daily limit (`keepOutput`), and
 *   given back for an output that was not kept after all (`returnOutput`).
 * - slots: a set per tenant and pool, each slot with a deadline (a lease). Turn slots
 *   (`turns`, the default pool) are renewed while their turn runs and released when it ends;
 *   followed streams' slots (`follows`) are held for as long as a stream may stay open and
 *   released when it ends. A crashed instance's slots lapse at their deadline, so none leaks
 *   forever.
 *
 * Every call is safe to resend after a lost reply: acquiring a slot id that is already held is
 * acquired, reserving a call id that is already held holds it once, settling a call id that was
 * settled counts nothing.
 */
export interface WindowVerdict {
  allowed: boolean
  limit: number
  remaining: number
  /** When the current fixed window ends (epoch ms): a refused request may pass after it. */
  resetAtMs: number
}

export type SlotVerdict =
  | { status: 'acquired'; active: number }
  | {
      status: 'full'
      active: number
      /**
       * When a slot is likely free (`firstFreeRetryAfter`): a share of a running turn's age, or
       * the deadline of a slot whose turn stopped renewing it. Slot ids stamped with their
       * acquisition time (`stampedLeaseId`) tell a turn's age.
       */
      retryAfterMs: number
    }

/** What a tenant's slots are counted for: running turns (the default), or followed streams. */
export type SlotPool = 'turns' | 'follows'

export interface DayUsage {
  /** `YYYY-MM-DD` (UTC). */
  day: string
  requests: number
  tokens: number
  costMicroUsd: number
  /** Held by model calls in flight (reserved, not settled yet). */
  reservedTokens: number
  reservedCostMicroUsd: number
  /** Bytes of tool output kept as output artifacts (counted before they are stored). */
  outputBytes: number
}

export type OutputVerdict =
  | { status: 'counted' }
  /** Today's kept output plus `bytes` would pass the limit; nothing was counted. */
  | { status: 'refused'; used: number }

/** One model call's estimate, to hold against the tenant's daily quotas until it settles. */
export interface Reservation {
  /** Names the call (session, turn, step): the same id is held once and settled once. */
  id: string
  tokens: number
  costMicroUsd: number
  /** The hold lapses this long after it was made when its call never settles (a crash). */
  ttlMs: number
  /** The tenant's daily limits; absent: none (the call is held, never refused). */
  tokensPerDay?: number
  costMicroUsdPerDay?: number
}

export type ReservationVerdict =
  | { status: 'held' }
  /** Settled before (the same step run again after a crash): nothing more is held or charged. */
  | { status: 'settled' }
  /**
   * Today's usage plus what other calls hold reached a limit. `used` and `reserved` are in the
   * quota's unit (tokens, or micro-USD for cost).
   */
  | { status: 'refused'; quota: 'tokens' | 'cost'; used: number; reserved: number }

export interface UsageCharge {
  tokens: number
  costMicroUsd: number
}

export interface TenantLimiter {
  /**
   * Counts one request: today's request counter, and with `perMinute` the request window (then
   * returns its verdict; undefined without a limit).
   */
  hit(tenant: string, perMinute: number | undefined): Promise<WindowVerdict | undefined>
  /** The request window as it stands, without counting. */
  peekWindow(tenant: string, perMinute: number): Promise<WindowVerdict>
  /** Takes slot `slot` when fewer than `limit` run; its deadline is now + `ttlMs`. */
  acquireSlot(
    tenant: string,
    slot: string,
    limit: number,
    ttlMs: number,
    pool?: SlotPool,
  ): Promise<SlotVerdict>
  /** Moves a held slot's deadline to now + `ttlMs`; false when it lapsed or was released. */
  renewSlot(tenant: string, slot: string, ttlMs: number, pool?: SlotPool): Promise<boolean>
  releaseSlot(tenant: string, slot: string, pool?: SlotPool): Promise<void>
  /** Slots whose deadline has not passed. */
  activeSlots(tenant: string, pool?: SlotPool): Promise<number>
  /**
   * Holds a model call's estimate when today's usage plus the other calls' holds is below each
   * limit given (so a day ends at most one call's worth above its limit); the check and the
   * hold are one atomic step, so parallel calls cannot all pass the same check.
   */
  reserve(tenant: string, reservation: Reservation): Promise<ReservationVerdict>
  /**
   * Replaces call `id`'s hold by what it used, added to today's counters — once per id: false
   * (nothing added) when it was settled before.
   */
  settle(tenant: string, id: string, charge: UsageCharge): Promise<boolean>
  /** Drops call `id`'s hold without charging (the call failed before any usage). */
  release(tenant: string, id: string): Promise<void>
  usageToday(tenant: string): Promise<DayUsage>
  /**
   * Counts `bytes` more of kept tool output today — with `limit`, only when today's count plus
   * `bytes` stays within it; the check and the count are one atomic step, so outputs kept at
   * once on several instances cannot pass it together.
   */
  keepOutput(tenant: string, bytes: number, limit: number | undefined): Promise<OutputVerdict>
  /** Takes back `bytes` counted by `keepOutput` for output that was not kept after all. */
  returnOutput(tenant: string, bytes: number): Promise<void>
}

/** The request window of production: one minute. */
export const REQUEST_WINDOW_MS = 60_000

/** How long a day's counters are kept after the day began: two days (then they expire). */
export const DAY_COUNTER_TTL_MS = 2 * 86_400_000

/** How long a settled call id is remembered (a settle resent later still counts once). */
export const SETTLED_TTL_MS = 2 * 86_400_000
