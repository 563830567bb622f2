/**
 * Lua scripts of the activity index in Redis (redis-activity-index.ts). Keys of one workspace of
 * one tenant: a sorted set of its sessions by position (`activity:`), a sorted set of the moves of
 * the last window (`activity-moves:`, members `<at>:<from>:<session id>` scored by `at`) and a hash
 * (`activity-meta:`) with the workspace's `clock` (the last position handed out) and `filled`
 * (when the listing last filled it in from the store). Positions are integer milliseconds,
 * written with `%.0f` (exact below 2^53; Lua's default number format would round them).
 */

/**
 * touch(set, moves, meta, session, atMs, windowMs): places the session at max(atMs, clock + 1),
 * recording its move when it was indexed, and drops moves older than the window.
 */
export const TOUCH_ACTIVITY_FN = `
local function touch_activity(set, moves, meta, session, at_ms, window_ms)
  local clock = tonumber(redis.call('HGET', meta, 'clock') or '0')
  local at = math.max(tonumber(at_ms), clock + 1)
  local position = string.format('%.0f', at)
  local old = redis.call('ZSCORE', set, session)
  if old then
    redis.call('ZADD', moves, position, position .. ':' .. string.format('%.0f', tonumber(old)) .. ':' .. session)
    redis.call('ZREMRANGEBYSCORE', moves, '-inf', '(' .. string.format('%.0f', at - tonumber(window_ms)))
  end
  redis.call('ZADD', set, position, session)
  redis.call('HSET', meta, 'clock', position)
end
`

/** KEYS: set, moves, meta. ARGV: session, atMs, windowMs. */
export const TOUCH_ACTIVITY = `${TOUCH_ACTIVITY_FN}
touch_activity(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3])
return 1
`

/**
 * KEYS: set, moves, meta. ARGV: asOf|'', 'desc'|'asc', boundary|'', limit.
 * → {asOf, filled|false, beyond {id, position…}, ties {id, position…}, moved {member, position…}}
 * `moved`: the first move after asOf of each session still indexed, with its position now.
 */
export const SCAN_ACTIVITY = `
local as_of = ARGV[1]
if as_of == '' then as_of = redis.call('HGET', KEYS[3], 'clock') or '0' end
local beyond
if ARGV[2] == 'desc' then
  local high = as_of
  if ARGV[3] ~= '' then high = '(' .. ARGV[3] end
  beyond = redis.call('ZREVRANGEBYSCORE', KEYS[1], high, '-inf', 'WITHSCORES', 'LIMIT', 0, ARGV[4])
else
  local low = '-inf'
  if ARGV[3] ~= '' then low = '(' .. ARGV[3] end
  beyond = redis.call('ZRANGEBYSCORE', KEYS[1], low, as_of, 'WITHSCORES', 'LIMIT', 0, ARGV[4])
end
local ties = {}
if ARGV[3] ~= '' then ties = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[3], ARGV[3], 'WITHSCORES') end
local moved = {}
local seen = {}
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. as_of, '+inf')) do
  local first = string.find(member, ':', 1, true)
  local second = first and string.find(member, ':', first + 1, true)
  if second then
    local session = string.sub(member, second + 1)
    if not seen[session] then
      seen[session] = true
      local now = redis.call('ZSCORE', KEYS[1], session)
      if now then
        table.insert(moved, member)
        table.insert(moved, now)
      end
    end
  end
end
return {as_of, redis.call('HGET', KEYS[3], 'filled'), beyond, ties, moved}
`

/** KEYS: set. ARGV: session ids. → the ones not in the set. */
export const MISSING_ACTIVITY = `
local missing = {}
for _, session in ipairs(ARGV) do
  if not redis.call('ZSCORE', KEYS[1], session) then table.insert(missing, session) end
end
return missing
`

/**
 * KEYS: set, meta. ARGV: filledAtMs, then position, session pairs. Adds what the set lacks (NX),
 * raises the clock to the highest position added, records when the workspace was filled.
 */
export const BACKFILL_ACTIVITY = `
local clock = tonumber(redis.call('HGET', KEYS[2], 'clock') or '0')
for i = 2, #ARGV, 2 do
  if redis.call('ZADD', KEYS[1], 'NX', ARGV[i], ARGV[i + 1]) == 1 then
    clock = math.max(clock, tonumber(ARGV[i]))
  end
end
redis.call('HSET', KEYS[2], 'clock', string.format('%.0f', clock), 'filled', ARGV[1])
return 1
`

/** KEYS: set. ARGV: session ids. */
export const DROP_ACTIVITY = `return redis.call('ZREM', KEYS[1], unpack(ARGV))`
