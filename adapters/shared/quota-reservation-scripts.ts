import type { DayUsage, OutputVerdict, ReservationVerdict } from '../../src/ports/tenant-limiter.ts'
import { replyArray, replyInteger } from './tenant-limiter-scripts.ts'

/**
 * Lua scripts and reply readers of the daily quotas' reservations on Redis (both transports run
 * them: `RedisTenantLimiter`). Keys, under the coordinator's namespace (`limiterKey`):
 *
 * - `usage:<tenant>:<YYYY-MM-DD>`: today's counters (`tokens`, `cost_micro_usd`, `requests`,
 * - `holds:<tenant>`: a hash of the model calls in flight, call id → `<deadline>:<tokens>:<cost>`
 *   (deadline in epoch ms, cost in micro-USD); a hold past its deadline is dropped by the next
 *   script that reads the hash
 *   and `output_bytes`, the tool output kept as output artifacts)
 * - `settled:<tenant>:<call id>`: set when a call is settled, kept two days, so a resent or
 *   repeated settle counts once
 *
 * The check and the hold are one script: parallel calls cannot all pass the same check.
 */

/** Sums the live holds of KEYS-hash `key` other than `except`, dropping lapsed or unreadable ones. */
const HOLDS = `
local function holds_of(key, now, except)
  local tokens, cost, mine = 0, 0, false
  local fields = redis.call('HGETALL', key)
  for i = 1, #fields, 2 do
    local id, entry = fields[i], fields[i + 1]
    local deadline, t, c = string.match(entry, '^(%d+):(%d+):(%d+)$')
    if not deadline or tonumber(deadline) <= now then
      redis.call('HDEL', key, id)
    elseif id == except then
      mine = true
    else
      tokens = tokens + tonumber(t)
      cost = cost + tonumber(c)
    end
  end
  return tokens, cost, mine
end
`

/**
 * KEYS: day, holds, settled. ARGV: id, tokens, cost, tokenLimit (-1: none), costLimit (-1: none),
 * now, deadline, ttlMs. → {1} held (also a resend of a held id) | {2} settled before |
 * {0, 1 tokens | 2 cost, used, reserved}.
 */
export const RESERVE = `${HOLDS}
if redis.call('EXISTS', KEYS[3]) == 1 then return {2} end
local held_tokens, held_cost, mine = holds_of(KEYS[2], tonumber(ARGV[6]), ARGV[1])
if not mine then
  local day = redis.call('HMGET', KEYS[1], 'tokens', 'cost_micro_usd')
  local used_tokens = tonumber(day[1] or '0') or 0
  local used_cost = tonumber(day[2] or '0') or 0
  local token_limit = tonumber(ARGV[4])
  local cost_limit = tonumber(ARGV[5])
  if token_limit >= 0 and used_tokens + held_tokens >= token_limit then
    return {0, 1, used_tokens, held_tokens}
  end
  if cost_limit >= 0 and used_cost + held_cost >= cost_limit then
    return {0, 2, used_cost, held_cost}
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[7] .. ':' .. ARGV[2] .. ':' .. ARGV[3])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[8]) then redis.call('PEXPIRE', KEYS[2], ARGV[8]) end
return {1}
`

/**
 * KEYS: day, holds, settled. ARGV: id, tokens, cost, dayTtlMs, settledTtlMs.
 * → 1 charged | 0 settled before (nothing added).
 */
export const SETTLE = `
redis.call('HDEL', KEYS[2], ARGV[1])
if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[5]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'tokens', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'cost_micro_usd', ARGV[3])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1
`

/** KEYS: holds. ARGV: id. */
export const RELEASE = `
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
`

/**
 * KEYS: day. ARGV: bytes, limit (-1: none), dayTtlMs. → {1} counted | {0, used} refused (nothing
 * counted).
 */
export const KEEP_OUTPUT = `
local bytes, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local used = tonumber(redis.call('HGET', KEYS[1], 'output_bytes') or '0') or 0
if limit >= 0 and used + bytes > limit then return {0, used} end
redis.call('HINCRBY', KEYS[1], 'output_bytes', bytes)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {1}
`

/** KEYS: day. ARGV: bytes. Never below 0. */
export const RETURN_OUTPUT = `
local used = tonumber(redis.call('HGET', KEYS[1], 'output_bytes') or '0') or 0
local back = math.min(used, tonumber(ARGV[1]))
if back > 0 then redis.call('HINCRBY', KEYS[1], 'output_bytes', -back) end
return 1
`

/**
 * KEYS: day, holds. ARGV: now. → {requests, tokens, cost} as stored (nil when unset), then the
 * live holds' tokens and cost, then the kept output bytes (nil when unset).
 */
export const USAGE = `${HOLDS}
local day = redis.call('HMGET', KEYS[1], 'requests', 'tokens', 'cost_micro_usd', 'output_bytes')
local held_tokens, held_cost = holds_of(KEYS[2], tonumber(ARGV[1]), nil)
return {day[1], day[2], day[3], held_tokens, held_cost, day[4]}
`

export function readReservation(reply: unknown): ReservationVerdict {
  const [status, quota, used, reserved] = replyArray(reply, 'reserve')
  const code = replyInteger(status, 'reserve')
  if (code === 1) return { status: 'held' }
  if (code === 2) return { status: 'settled' }
  return {
    status: 'refused',
    quota: replyInteger(quota, 'reserve') === 1 ? 'tokens' : 'cost',
    used: replyInteger(used, 'reserve'),
    reserved: replyInteger(reserved, 'reserve'),
  }
}

/** Today's counters and the live holds from `USAGE`; an unset counter is 0. */
export function readUsage(day: string, reply: unknown): DayUsage {
  const [requests, tokens, cost, heldTokens, heldCost, output] = replyArray(reply, 'usageToday')
  const counter = (value: unknown) =>
    value === undefined || value === null ? 0 : replyInteger(value, 'usageToday')
  return {
    day,
    requests: counter(requests),
    tokens: counter(tokens),
    costMicroUsd: counter(cost),
    reservedTokens: counter(heldTokens),
    reservedCostMicroUsd: counter(heldCost),
    outputBytes: counter(output),
  }
}

export function readOutputVerdict(reply: unknown): OutputVerdict {
  const [status, used] = replyArray(reply, 'keepOutput')
  return replyInteger(status, 'keepOutput') === 1
    ? { status: 'counted' }
    : { status: 'refused', used: replyInteger(used, 'keepOutput') }
}
