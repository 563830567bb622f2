import type { TurnlineError } from '../../src/contract/errors.ts'
import { type IoDeadline, withDeadline } from './io-deadline.ts'

/**
 * The few Redis commands the Redis-backed coordinator and tenant limiter send, over whatever
 * transport an adapter has (Upstash's REST API, a TCP connection). Each method is one round
 * trip; replies are passed on raw and read by `coordinator-redis-replies.ts` and
 * `tenant-limiter-scripts.ts`.
 */
export interface RedisCommands {
  /** EVAL of `script` with `keys` and `args` (no NOSCRIPT fallback round trip). */
  eval(script: string, keys: string[], args: string[]): Promise<unknown>
  get(key: string): Promise<unknown>
  /** SET `key` `value` PX `ttlMs`. */
  setPx(key: string, value: string, ttlMs: number): Promise<unknown>
  lrange(key: string, start: number, stop: number): Promise<unknown>
  zrem(key: string, member: string): Promise<unknown>
  /** The TurnlineError a failed command becomes (the adapter knows its client's errors). */
  toError(error: unknown, operation: string): TurnlineError
}

/**
 * One call under the coordinator's deadline; a resend repeats exactly the same command. A
 * failure is translated by the transport, then retried or given up on by `withDeadline`.
 */
export function callRedis<T>(
  deadline: IoDeadline,
  commands: Pick<RedisCommands, 'toError'>,
  operation: string,
  run: () => Promise<T>,
): Promise<T> {
  return withDeadline(
    { deadline, code: 'coordinator_unavailable', service: 'the coordinator', operation },
    async () => {
      try {
        return await run()
      } catch (error) {
        throw commands.toError(error, operation)
      }
    },
  )
}
