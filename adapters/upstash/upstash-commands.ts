import type { Redis } from '@upstash/redis'
import type { TurnlineError } from '../../src/contract/errors.ts'
import type { RedisCommands } from '../shared/redis-commands.ts'
import { toCoordinatorError } from './upstash-errors.ts'
import { UpstashRest, type UpstashRetry } from './upstash-rest.ts'

/** How the Upstash adapters reach their database: its REST URL and token, or a ready client. */
export type UpstashConnection =
  | {
      url: string
      token: string
      /** How requests are sent (default: the global fetch; Node's entries: adapters/node-http's fetch). */
      fetch?: typeof fetch
      /** Transport retries (a lost response is safe to resend: see the scripts). */
      retry?: UpstashRetry
      /** Batch calls made in the same tick into one `/pipeline` request (default: true). */
      enableAutoPipelining?: boolean
    }
  | {
      /** A ready `@upstash/redis` client. */
      client: Redis
    }

/**
 * The Redis commands over Upstash's REST API: each one HTTP request (or a share of one
 * `/pipeline` request). Given a URL and token, it speaks the REST protocol itself on its
 * fetch (`UpstashRest`), every request aborted after `attemptMs`; given an `@upstash/redis`
 * client, it calls that. Replies are raw either way, as the shared reply readers expect (they
 * also read what a client with automatic deserialization gives).
 */
export class UpstashCommands implements RedisCommands {
  readonly #client: Redis | undefined
  readonly #rest: UpstashRest | undefined
  #clientRequests = 0

  constructor(connection: UpstashConnection, attemptMs: number) {
    if ('client' in connection) {
      this.#client = connection.client
      this.#client.use((request, next) => {
        this.#clientRequests += 1
        return next(request)
      })
      return
    }
    this.#rest = new UpstashRest({
      url: connection.url,
      token: connection.token,
      fetch: connection.fetch ?? ((input, init) => fetch(input, init)),
      attemptMs,
      ...(connection.retry === undefined ? {} : { retry: connection.retry }),
      ...(connection.enableAutoPipelining === undefined
        ? {}
        : { pipelining: connection.enableAutoPipelining }),
    })
  }

  /** HTTP requests sent so far (each is one round trip). */
  get requestCount(): number {
    return this.#rest?.requestCount ?? this.#clientRequests
  }

  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    if (this.#client) return this.#client.eval(script, keys, args)
    return this.#send(['eval', script, String(keys.length), ...keys, ...args])
  }

  get(key: string): Promise<unknown> {
    return this.#client ? this.#client.get(key) : this.#send(['get', key])
  }

  setPx(key: string, value: string, ttlMs: number): Promise<unknown> {
    if (this.#client) return this.#client.set(key, value, { px: ttlMs })
    return this.#send(['set', key, value, 'px', String(ttlMs)])
  }

  lrange(key: string, start: number, stop: number): Promise<unknown> {
    if (this.#client) return this.#client.lrange(key, start, stop)
    return this.#send(['lrange', key, String(start), String(stop)])
  }

  zrem(key: string, member: string): Promise<unknown> {
    return this.#client ? this.#client.zrem(key, member) : this.#send(['zrem', key, member])
  }

  toError(error: unknown, operation: string): TurnlineError {
    return toCoordinatorError(error, operation)
  }

  #send(command: string[]): Promise<unknown> {
    if (!this.#rest) throw new Error('UpstashCommands: no REST connection')
    return this.#rest.send(command)
  }
}
