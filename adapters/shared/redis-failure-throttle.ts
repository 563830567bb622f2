import { TurnlineError } from '../../src/contract/errors.ts'
import type { Clock } from '../../src/ports/clock.ts'
import type {
  FailureThrottle,
  ThrottleBucket,
  ThrottleVerdict,
} from '../../src/ports/failure-throttle.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import type { IoDeadline } from './io-deadline.ts'
import { callRedis, type RedisCommands } from './redis-commands.ts'
import { replyArray, replyInteger } from './tenant-limiter-scripts.ts'

/**
 * KEYS: the buckets. ARGV: now, then capacity and refillMs of each bucket. For each,
 * `spendToken` of `adapters/memory/spend-token.ts` in Lua on a hash `{t: tokens, at: instant,
 * b: in a burst}`, which expires when the bucket would be full again. → {counted, remaining,
 * retryAfterMs, burstStarted} per bucket, flat.
 */
export const SPEND_TOKENS = `
local now = tonumber(ARGV[1])
local out = {}
for i, key in ipairs(KEYS) do
  local capacity = tonumber(ARGV[2 * i])
  local refill = tonumber(ARGV[2 * i + 1])
  local saved = redis.call('HMGET', key, 't', 'at', 'b')
  local tokens = capacity
  local at = now
  if saved[1] then
    tokens = tonumber(saved[1])
    at = tonumber(saved[2])
  end
  tokens = math.min(capacity, tokens + math.max(0, now - at) / refill)
  local in_burst = saved[3] == '1' and tokens < capacity
  local counted = 0
  if tokens >= 1 then
    counted = 1
    tokens = tokens - 1
  end
  local empty = tokens < 1
  local started = 0
  if empty and not in_burst then started = 1 end
  local burst = '0'
  if empty or in_burst then burst = '1' end
  redis.call('HSET', key, 't', tostring(tokens), 'at', tostring(now), 'b', burst)
  redis.call('PEXPIRE', key, math.max(1, math.ceil((capacity - tokens) * refill)))
  local retry = 0
  if empty then retry = math.ceil((1 - tokens) * refill) end
  out[#out + 1] = counted
  out[#out + 1] = math.floor(tokens)
  out[#out + 1] = retry
  out[#out + 1] = started
end
return out
`

export interface RedisFailureThrottleOptions<C extends RedisCommands> {
  /** How the commands reach Redis (Upstash REST, a TCP connection). */
  commands: C
  /** Deadline of every call, already checked by the adapter (`checkDeadline`). */
  deadline: IoDeadline
  /** The coordinator's key prefix (default `turnline:`): keys are `<ns>authfail:<bucket>`. */
  namespace?: string
  clock?: Clock
}

/**
 * The FailureThrottle on Redis, whatever carries the commands: one EVAL per failure for all of
 * its buckets, so every instance on the database spends the same tokens. A resent call (a lost
 * reply) counts the failure twice, which errs towards refusing.
 */
export class RedisFailureThrottle<C extends RedisCommands = RedisCommands>
  implements FailureThrottle
{
  protected readonly commands: C
  readonly #deadline: IoDeadline
  readonly #ns: string
  readonly #clock: Clock

  constructor(options: RedisFailureThrottleOptions<C>) {
    this.commands = options.commands
    this.#deadline = options.deadline
    this.#ns = options.namespace ?? 'turnline:'
    this.#clock = options.clock ?? systemClock
  }

  async fail(buckets: readonly ThrottleBucket[]): Promise<ThrottleVerdict[]> {
    const keys = buckets.map((bucket) => `${this.#ns}authfail:${bucket.id}`)
    const args = [String(this.#clock.now())]
    for (const { rule } of buckets) args.push(String(rule.capacity), String(rule.refillMs))
    const reply = await callRedis(this.#deadline, this.commands, 'authFailure', () =>
      this.commands.eval(SPEND_TOKENS, keys, args),
    )
    const values = replyArray(reply, 'authFailure').map((v) => replyInteger(v, 'authFailure'))
    if (values.length !== 4 * buckets.length) {
      throw new TurnlineError('corrupt_data', 'authFailure: unexpected reply', {
        details: { values: values.length, buckets: buckets.length },
      })
    }
    return buckets.map((_, i) => ({
      counted: values[4 * i] === 1,
      remaining: values[4 * i + 1] ?? 0,
      retryAfterMs: values[4 * i + 2] ?? 0,
      burstStarted: values[4 * i + 3] === 1,
    }))
  }
}
