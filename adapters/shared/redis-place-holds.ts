import type { Clock } from '../../src/ports/clock.ts'
import { checkPlaceHold } from '../../src/ports/coordinator-checks.ts'
import { PLACE_VERSION_TTL_MS, type PlaceBook } from '../../src/ports/place-holds.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { asArray, corrupt } from './coordinator-redis-replies.ts'
import type { IoDeadline } from './io-deadline.ts'
import { RedisActivityIndex } from './redis-activity-index.ts'
import { callRedis, type RedisCommands } from './redis-commands.ts'

/** KEYS: holds (sorted set, deadline by id), version. ARGV: now. → {version, {ids}}. */
const READ_PLACES = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local version = redis.call('GET', KEYS[2]) or '0'
return {version, redis.call('ZRANGE', KEYS[1], 0, -1)}
`

/**
 * KEYS: holds, version. ARGV: version read, id, deadline, holds' ttl ms, version's ttl ms, places
 * free at the read. → 1 held (or held already: a resend), 0 as many holds taken since as were free.
 */
const HOLD_PLACE = `
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 1 end
local since = tonumber(redis.call('GET', KEYS[2]) or '0') - tonumber(ARGV[1])
if since < 0 or since >= tonumber(ARGV[6]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
`

/**
 * The place holds in Redis (src/ports/place-holds.ts), the base of the Redis coordinators beside
 * the activity index: per scope `<prefix>places:<scope>` (a sorted set of hold ids by deadline)
 * and `<prefix>places-version:<scope>` (a counter). Reading and holding are one script each, a
 * release one ZREM.
 */
export class RedisPlaceHolds<C extends RedisCommands = RedisCommands>
  extends RedisActivityIndex<C>
  implements PlaceBook
{
  readonly #placesNs: string
  readonly #placeClock: Clock

  constructor(commands: C, deadline: IoDeadline, namespace: string, clock: Clock = systemClock) {
    super(commands, deadline, namespace)
    this.#placesNs = namespace
    this.#placeClock = clock
  }

  async readPlaces(scope: string): Promise<{ version: string; held: string[] }> {
    checkPlaceHold(scope)
    const reply = await this.#call('readPlaces', () =>
      this.commands.eval(READ_PLACES, this.#keys(scope), [String(this.#placeClock.now())]),
    )
    const [version, held] = asArray(reply, 'readPlaces')
    if (typeof version !== 'string' && typeof version !== 'number') {
      throw corrupt('readPlaces', version)
    }
    return { version: String(version), held: asArray(held, 'readPlaces').map(String) }
  }

  async holdPlace(
    scope: string,
    id: string,
    seen: { version: string; free: number },
    ttlMs: number,
  ): Promise<boolean> {
    checkPlaceHold(scope, id, ttlMs)
    const deadline = this.#placeClock.now() + ttlMs
    const reply = await this.#call('holdPlace', () =>
      this.commands.eval(HOLD_PLACE, this.#keys(scope), [
        seen.version,
        id,
        String(deadline),
        String(ttlMs),
        String(PLACE_VERSION_TTL_MS),
        String(seen.free),
      ]),
    )
    return Number(reply) === 1
  }

  async releasePlace(scope: string, id: string): Promise<void> {
    checkPlaceHold(scope, id)
    const [holds] = this.#keys(scope)
    await this.#call('releasePlace', () => this.commands.zrem(holds as string, id))
  }

  #keys(scope: string): [string, string] {
    return [`${this.#placesNs}places:${scope}`, `${this.#placesNs}places-version:${scope}`]
  }

  #call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return callRedis(this.deadline, this.commands, operation, run)
  }
}
