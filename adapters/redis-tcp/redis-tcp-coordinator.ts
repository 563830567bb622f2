import type { IoDeadline } from '../shared/io-deadline.ts'
import { onTransport } from '../shared/redis-adapter-options.ts'
// The Lua scripts and reply readers are shared with the Upstash adapter (adapters/shared): the same
// keys with the same meaning, so both adapters can serve one database.
import { RedisCoordinator } from '../shared/redis-coordinator.ts'
import type { RedisCoordinatorSettings } from '../shared/redis-coordinator-options.ts'
import { RedisTcpCommands, type RedisTcpConnection } from './redis-tcp-commands.ts'

export interface RedisTcpCoordinatorOptions extends RedisTcpConnection, RedisCoordinatorSettings {
  /**
   * Deadline of every call: a command is abandoned after `attemptMs` (ioredis' command timeout)
   * and resent while `budgetMs` lasts — every script is safe to resend — then the call fails
   * `coordinator_unavailable` (503, Retry-After). Default 3 s per attempt, 15 s per call.
   */
  deadline?: IoDeadline
}

/**
 * Coordinator on a plain Redis server over TCP (ioredis), for deployments that run their own
 * Redis (Docker Compose, ElastiCache, Memorystore) instead of Upstash's REST API: the shared
 * `RedisCoordinator` over `RedisTcpCommands`, the same Lua scripts as the Upstash adapter, each
 * one EVAL: an ordinary turn is `beginTurn` plus `endTurn`, two round trips. Node and Lambda
 * only (it needs TCP sockets).
 *
 * A lost connection is retried once per command, and a command that does not answer in time is
 * resent within the call's deadline (then the call fails retryable `coordinator_unavailable`);
 * every script is safe to resend.
 */
export class RedisTcpCoordinator extends RedisCoordinator<RedisTcpCommands> {
  constructor(options: RedisTcpCoordinatorOptions) {
    super(onTransport('RedisTcpCoordinator', options, RedisTcpCommands))
  }

  /** Commands sent so far (each is one round trip: nothing is pipelined). */
  get requestCount(): number {
    return this.commands.sent
  }

  /** Closes the connection (pending commands finish first). */
  async close(): Promise<void> {
    await this.commands.close()
  }
}
