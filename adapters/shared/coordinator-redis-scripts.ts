import {
  type InputArtifactRef,
  InputArtifactsSchema,
} from '../../src/contract/turn-input-record.ts'
import type { QueuedIntent } from '../../src/ports/coordinator.ts'
import { TOUCH_ACTIVITY_FN } from './activity-redis-scripts.ts'

/**
 * Lua scripts of the Redis Coordinators (adapters/upstash over REST, adapters/redis-tcp over TCP:
 * same scripts, same keys, so either adapter can serve a database the other wrote). Each runs atomically in one EVAL, so every Coordinator
 * call is one HTTP round trip. Every key a script touches is passed in KEYS (Upstash routes and
 * locks by KEYS); numbers travel as decimal strings and are written back as the caller sent them,
 * never reformatted by Lua.
 *
 * All scripts are safe to re-send after a lost response: the client retries transport failures,
 * and a repeated script converges to the same state instead of turning a success into a failure.
 */

/**
 * KEYS: lease, tip, intents[, idem]. ARGV: token, leaseMs.
 * → {'replay', record} | {'acquired', tip|nil, {intent entries}} | {'busy', tip|nil, pttl}
 * A lease already holding this very token is a retry of a request that won: still acquired.
 */
export const BEGIN_TURN = `
if KEYS[4] then
  local record = redis.call('GET', KEYS[4])
  if record then return {'replay', record} end
end
local tip = redis.call('GET', KEYS[2])
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {'acquired', tip, redis.call('LRANGE', KEYS[3], 0, -1)}
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'acquired', tip, redis.call('LRANGE', KEYS[3], 0, -1)}
end
return {'busy', tip, redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[1])}
`

/** KEYS: lease. ARGV: token, leaseMs. → 1 renewed | 0 not the holder. */
export const RENEW_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`

/** KEYS: lease. ARGV: token. → 1 released | 0 not the holder. */
export const RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

/** Deletes an erased session's tip, intents, cancellation flag and idempotency records. */
export const FORGET_SESSION = `return redis.call('DEL', unpack(KEYS))`

/** Raises the tip at `key` to `batch` (never lowers it); ttl '0' keeps it forever. */
const RAISE_TIP = `
local function raise_tip(key, batch, ttl)
  local current = redis.call('GET', key)
  if (not current) or tonumber(batch) > tonumber(current) then
    if ttl == '0' then redis.call('SET', key, batch) else redis.call('SET', key, batch, 'EX', ttl) end
  elseif ttl ~= '0' then
    redis.call('EXPIRE', key, ttl)
  end
end
`

/** KEYS: tip. ARGV: batch, tipTtlSeconds. */
export const SET_TIP = `${RAISE_TIP}
raise_tip(KEYS[1], ARGV[1], ARGV[2])
return 1
`

/**
 * KEYS: lease, tip, intents[, idem][, activity set, moves, meta]. ARGV: token, tip|'',
 * tipTtlSeconds, record|'', idemTtlSeconds, session|'', atMs, windowMs, acknowledged intent ids…
 * Raises the tip, stores the idempotency record if none exists (first outcome wins), moves the
 * session up the activity index (the idem key is there when the record is), removes the
 * acknowledged intents, releases the lease only if the token still holds it.
 * → 1 lease released | 0 it was lost already.
 */
export const END_TURN = `${RAISE_TIP}${TOUCH_ACTIVITY_FN}
if ARGV[2] ~= '' then raise_tip(KEYS[2], ARGV[2], ARGV[3]) end
local activity = 4
if ARGV[4] ~= '' then
  redis.call('SET', KEYS[4], ARGV[4], 'NX', 'EX', ARGV[5])
  activity = 5
end
if ARGV[6] ~= '' then
  touch_activity(KEYS[activity], KEYS[activity + 1], KEYS[activity + 2], ARGV[6], ARGV[7], ARGV[8])
end
if #ARGV > 8 then
  local acked = {}
  for i = 9, #ARGV do acked[ARGV[i]] = true end
  for _, item in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
    local stop = string.find(item, '\\n', 3, true)
    if stop and acked[string.sub(item, 3, stop - 1)] then redis.call('LREM', KEYS[3], 1, item) end
  end
end
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

/**
 * Intent entries are list items `1\n<id>\n<text>` (format version 1), or
 * `2\n<id>\n<artifacts>\n<text>` (version 2: a follow-up kept as an artifact, `<artifacts>` the
 * JSON of its references, `<text>` its preview); ids never contain a line feed, so a script finds
 * an id after the one-character version without a JSON library.
 * KEYS: intents. ARGV: id, entry, capacity. → {'accepted', pending} | {'full', pending}
 * An id already pending is accepted again without a second copy (safe retries).
 */
export const ENQUEUE_INTENT = `
local items = redis.call('LRANGE', KEYS[1], 0, -1)
local named = ARGV[1] .. '\\n'
for _, item in ipairs(items) do
  if string.sub(item, 3, 2 + #named) == named then return {'accepted', #items} end
end
if #items >= tonumber(ARGV[3]) then return {'full', #items} end
return {'accepted', redis.call('RPUSH', KEYS[1], ARGV[2])}
`

/** KEYS: intents. ARGV: ids to remove. → how many entries were removed. */
export const ACK_INTENTS = `
local acked = {}
for i = 1, #ARGV do acked[ARGV[i]] = true end
local removed = 0
for _, item in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local stop = string.find(item, '\\n', 3, true)
  if stop and acked[string.sub(item, 3, stop - 1)] then
    removed = removed + redis.call('LREM', KEYS[1], 1, item)
  end
end
return removed
`

/**
 * KEYS: claim. ARGV: token, ttlMs. → 1 first claim (or a resend of it) | 0 already claimed.
 * The random token tells a resend of the winning call (its reply was lost) from a replay.
 */
export const CLAIM_ONCE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
return 0
`

export const INTENT_ENTRY_VERSION = '1'
export const KEPT_INTENT_ENTRY_VERSION = '2'

/** The list item of an intent: version 2 when its text was kept as an artifact, else 1. */
export function encodeIntentEntry(intent: QueuedIntent): string {
  const { id, text, artifacts } = intent
  if (!artifacts?.length) return `${INTENT_ENTRY_VERSION}\n${id}\n${text}`
  return `${KEPT_INTENT_ENTRY_VERSION}\n${id}\n${JSON.stringify(artifacts)}\n${text}`
}

/** The entry's intent, or null when it is not a version 1 or 2 entry. */
export function decodeIntentEntry(entry: string): QueuedIntent | null {
  const version = entry.slice(0, 2)
  if (version !== `${INTENT_ENTRY_VERSION}\n` && version !== `${KEPT_INTENT_ENTRY_VERSION}\n`) {
    return null
  }
  const stop = entry.indexOf('\n', 2)
  if (stop <= 2) return null
  const id = entry.slice(2, stop)
  if (version === `${INTENT_ENTRY_VERSION}\n`) return { id, text: entry.slice(stop + 1) }
  const end = entry.indexOf('\n', stop + 1)
  if (end < 0) return null
  const artifacts = artifactsOf(entry.slice(stop + 1, end))
  return artifacts ? { id, text: entry.slice(end + 1), artifacts } : null
}

function artifactsOf(json: string): InputArtifactRef[] | undefined {
  try {
    const parsed = InputArtifactsSchema.safeParse(JSON.parse(json))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/** KEYS: the namespace's claim. ARGV: claim. → the claim in force (ARGV[1] when it was first). */
export const CLAIM_NAMESPACE = `
local holder = redis.call('GET', KEYS[1])
if holder then return holder end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`

/** KEYS: lease. → {holder|false, pttl}: who holds the lease and its time left, read together. */
export const READ_LEASE = `
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
`
