import { TurnlineError } from '../../src/contract/errors.ts'
import type { SlotVerdict } from '../../src/ports/tenant-limiter.ts'
import {
  firstFreeRetryAfter,
  type HeldLease,
  leaseAcquiredAt,
} from '../../src/shared/held-retry-after.ts'

/**
 * Lua scripts and reply readers of the Redis TenantLimiter (`redis-tenant-limiter.ts`, over
 * adapters/upstash's REST or adapters/redis-tcp's TCP): the same keys with the same meaning, so
 * either adapter can serve a database the other wrote. Keys, under the coordinator's namespace:
 *
 * - `rl:rpm:<tenant>:<window number>`: requests counted in one fixed window of the sliding
 *   request window (`SLIDING_WINDOW_HIT`, `PEEK_WINDOW`; the layout and algorithm of
 *   `@upstash/ratelimit`'s `slidingWindow` with prefix `rl:rpm`, which earlier versions ran)
 * - `usage:<tenant>:<YYYY-MM-DD>`: a hash of today's `requests`, `tokens`, `cost_micro_usd`
 * - `slots:<tenant>`: a sorted set of running turn slots scored by their deadline (epoch ms);
 *   `follow-slots:<tenant>` the same for followed streams
 * - `holds:<tenant>`, `settled:<tenant>:<call id>`: the quotas' reservations
 *   (`quota-reservation-scripts.ts`)
 *
 * Instants come from the caller's clock (ARGV).
 */

/** Gives `KEYS[n]` a TTL when it has none (the first write of a day's hash). */
const KEEP_TTL = `
local function keep_ttl(key, ttl)
  if redis.call('PTTL', key) < 0 then redis.call('PEXPIRE', key, ttl) end
end
`

/** KEYS: day. ARGV: dayTtlMs. → today's request count. */
export const COUNT_REQUEST = `${KEEP_TTL}
local n = redis.call('HINCRBY', KEYS[1], 'requests', 1)
keep_ttl(KEYS[1], ARGV[1])
return n
`

/**
 * KEYS: current window, previous window, day. ARGV: limit, now, windowMs, dayTtlMs.
 * Counts the request for today, then in the window when it fits. → {allowed 1|0, used after}.
 */
export const SLIDING_WINDOW_HIT = `${KEEP_TTL}
redis.call('HINCRBY', KEYS[3], 'requests', 1)
keep_ttl(KEYS[3], ARGV[4])
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
local used = math.floor((1 - (now % window) / window) * previous) + current
if used >= limit then return {0, used} end
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], window * 2 + 1000) end
return {1, used + 1}
`

/** KEYS: current window, previous window. → {requests in current, requests in previous}. */
export const PEEK_WINDOW = `
return {tonumber(redis.call('GET', KEYS[1]) or '0'), tonumber(redis.call('GET', KEYS[2]) or '0')}
`

/** Drops lapsed slots and makes the set outlive its latest deadline. */
const SLOTS = `
local function live(key, now)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  return redis.call('ZCARD', key)
end
local function stretch(key, ttl)
  local pttl = redis.call('PTTL', key)
  if pttl < tonumber(ttl) then redis.call('PEXPIRE', key, ttl) end
end
`

/**
 * KEYS: slots. ARGV: slot, limit, ttlMs, now.
 * → {1, active} acquired (also when this slot already runs: a resend) | {0, active, slot, deadline, …}
 * (every live slot with its deadline: `readSlotVerdict` works out when one is likely free).
 */
export const ACQUIRE_SLOT = `${SLOTS}
local now = tonumber(ARGV[4])
local active = live(KEYS[1], now)
local deadline = now + tonumber(ARGV[3])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], deadline, ARGV[1])
  stretch(KEYS[1], ARGV[3])
  return {1, active}
end
if active >= tonumber(ARGV[2]) then
  local reply = {0, active}
  for _, item in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')) do
    table.insert(reply, item)
  end
  return reply
end
redis.call('ZADD', KEYS[1], deadline, ARGV[1])
stretch(KEYS[1], ARGV[3])
return {1, active + 1}
`

/** KEYS: slots. ARGV: slot, ttlMs, now. → 1 renewed | 0 lapsed or released. */
export const RENEW_SLOT = `${SLOTS}
local now = tonumber(ARGV[3])
live(KEYS[1], now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
stretch(KEYS[1], ARGV[2])
return 1
`

/** KEYS: slots. ARGV: now. → slots whose deadline has not passed. */
export const ACTIVE_SLOTS = `${SLOTS}
return live(KEYS[1], tonumber(ARGV[1]))
`

const KEY_PREFIXES = {
  window: 'rl:rpm',
  day: 'usage',
  slots: 'slots',
  followSlots: 'follow-slots',
  holds: 'holds',
  settled: 'settled',
} as const

export type LimiterKeyKind = keyof typeof KEY_PREFIXES

/** A limiter key under `namespace` (`turnline:` → `turnline:usage:acme:2026-12-03`). */
export function limiterKey(namespace: string, kind: LimiterKeyKind, ...parts: string[]): string {
  return [`${namespace}${KEY_PREFIXES[kind]}`, ...parts].join(':')
}

/** An integer from a Redis reply (string or number); anything else is corrupt data. */
export function replyInteger(value: unknown, operation: string): number {
  const number = typeof value === 'string' ? Number(value) : value
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) {
    throw corruptReply(operation, value)
  }
  return number
}

/** An array reply; anything else is corrupt data. */
export function replyArray(value: unknown, operation: string): unknown[] {
  if (!Array.isArray(value)) throw corruptReply(operation, value)
  return value as unknown[]
}

export function readSlotVerdict(reply: unknown, ttlMs: number, nowMs: number): SlotVerdict {
  const [status, active, ...held] = replyArray(reply, 'acquireSlot')
  if (replyInteger(status, 'acquireSlot') === 1) {
    return { status: 'acquired', active: replyInteger(active, 'acquireSlot') }
  }
  const slots: HeldLease[] = []
  for (let i = 0; i + 1 < held.length; i += 2) {
    const deadline = replyInteger(held[i + 1], 'acquireSlot')
    const id = held[i]
    slots.push({
      remainingMs: deadline - nowMs,
      ttlMs,
      acquiredAtMs: typeof id === 'string' ? leaseAcquiredAt(id) : undefined,
    })
  }
  return {
    status: 'full',
    active: replyInteger(active, 'acquireSlot'),
    retryAfterMs: firstFreeRetryAfter(slots, nowMs).retryAfterMs,
  }
}

function corruptReply(operation: string, value: unknown): TurnlineError {
  const shown = JSON.stringify(value) ?? String(value)
  return new TurnlineError('corrupt_data', `limiter ${operation}: unexpected reply`, {
    details: { operation, reply: shown.slice(0, 200) },
  })
}
