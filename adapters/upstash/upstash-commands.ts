import { Redis, type RedisConfigNodejs } from '@upstash/redis'
import type { TurnlineError } from '../../src/contract/errors.ts'
import type { RedisCommands } from '../shared/redis-commands.ts'
import { toCoordinatorError } from './upstash-errors.ts'

/** How the Upstash adapters reach their database: its REST URL and token, or a ready client. */
export type UpstashConnection =
  | {
      url: string
      token: string
      /** Transport retries of the client (a lost response is safe to resend: see the scripts). */
      retry?: RedisConfigNodejs['retry']
      /** Batch calls made in the same tick into one request (the client's default: true). */
      enableAutoPipelining?: boolean
    }
  | {
      /** A ready client. */
      client: Redis
    }

/**
 * The Redis commands over Upstash's REST API (`@upstash/redis`): each one HTTP request. A client
 * built here aborts every HTTP request after `attemptMs` and leaves replies raw (no automatic
 * deserialization), as the shared reply readers expect.
 */
export class UpstashCommands implements RedisCommands {
  readonly client: Redis

  constructor(connection: UpstashConnection, attemptMs: number) {
    this.client =
      'client' in connection
        ? connection.client
        : new Redis({
            url: connection.url,
            token: connection.token,
            automaticDeserialization: false,
            enableTelemetry: false,
            // Every HTTP request gets its own timer (a function: called once per request).
            signal: () => AbortSignal.timeout(attemptMs),
            ...(connection.retry === undefined ? {} : { retry: connection.retry }),
            ...(connection.enableAutoPipelining === undefined
              ? {}
              : { enableAutoPipelining: connection.enableAutoPipelining }),
          })
  }

  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.client.eval(script, keys, args)
  }

  get(key: string): Promise<unknown> {
    return this.client.get(key)
  }

  setPx(key: string, value: string, ttlMs: number): Promise<unknown> {
    return this.client.set(key, value, { px: ttlMs })
  }

  lrange(key: string, start: number, stop: number): Promise<unknown> {
    return this.client.lrange(key, start, stop)
  }

  zrem(key: string, member: string): Promise<unknown> {
    return this.client.zrem(key, member)
  }

  toError(error: unknown, operation: string): TurnlineError {
    return toCoordinatorError(error, operation)
  }
}
