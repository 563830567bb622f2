import { Redis } from 'ioredis'
import type { TurnlineError } from '../../src/contract/errors.ts'
import type { RedisCommands } from '../shared/redis-commands.ts'
import { toRedisTcpError } from './redis-tcp-errors.ts'

export interface RedisTcpConnection {
  /** `redis://[user:password@]host:port[/db]`, or `rediss://…` for TLS. */
  url: string
  /** How long a connection attempt may take (default 5000 ms). */
  connectTimeoutMs?: number
}

/**
 * The Redis commands over one TCP connection (ioredis), opened on the first command. A command
 * is abandoned after `attemptMs` (ioredis' command timeout); a lost connection is retried once
 * per command. Connection errors surface on the commands that fail, with the last one in their
 * message.
 */
export class RedisTcpCommands implements RedisCommands {
  readonly client: Redis
  #sent = 0
  #lastConnectionError: string | undefined

  constructor(connection: RedisTcpConnection, attemptMs: number) {
    this.client = new Redis(connection.url, {
      lazyConnect: true,
      connectTimeout: connection.connectTimeoutMs ?? 5000,
      commandTimeout: attemptMs,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    })
    this.client.on('error', (error: Error) => {
      this.#lastConnectionError = error.message
    })
    this.client.on('ready', () => {
      this.#lastConnectionError = undefined
    })
  }

  /** Commands sent so far (each is one round trip: nothing is pipelined). */
  get sent(): number {
    return this.#sent
  }

  /** Closes the connection (pending commands finish first). */
  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect())
  }

  eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    this.#sent += 1
    return this.client.eval(script, keys.length, ...keys, ...args)
  }

  get(key: string): Promise<unknown> {
    this.#sent += 1
    return this.client.get(key)
  }

  setPx(key: string, value: string, ttlMs: number): Promise<unknown> {
    this.#sent += 1
    return this.client.set(key, value, 'PX', ttlMs)
  }

  lrange(key: string, start: number, stop: number): Promise<unknown> {
    this.#sent += 1
    return this.client.lrange(key, start, stop)
  }

  zrem(key: string, member: string): Promise<unknown> {
    this.#sent += 1
    return this.client.zrem(key, member)
  }

  toError(error: unknown, operation: string): TurnlineError {
    return toRedisTcpError(error, operation, this.#lastConnectionError)
  }
}
