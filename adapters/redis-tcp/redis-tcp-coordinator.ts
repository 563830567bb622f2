import { Redis } from 'ioredis'
import { type Ids, randomIds } from '../../src/ports/clock.ts'
import {
  type BeginTurnRequest,
  type BeginTurnResult,
  type Coordinator,
  DEFAULT_IDEMPOTENCY_TTL_SECONDS,
  DEFAULT_INTENT_CAPACITY,
  type EndTurnRequest,
  type EnqueueIntentResult,
  type Lease,
  type QueuedIntent,
} from '../../src/ports/coordinator.ts'
import {
  checkBatch,
  checkBeginTurn,
  checkEndTurn,
  checkIntent,
  checkPositiveInteger,
  idempotencyKey,
} from '../../src/ports/coordinator-checks.ts'
import {
  asArray,
  asInteger,
  corrupt,
  decodeIntents,
  parseRecord,
  parseTip,
  pickRecord,
} from '../../src/ports/coordinator-redis-replies.ts'
// The Lua scripts and reply readers are shared with the Upstash adapter (src/ports): the same
// keys with the same meaning, so both adapters can serve one database.
import * as scripts from '../../src/ports/coordinator-redis-scripts.ts'
import { toRedisTcpError } from './redis-tcp-errors.ts'

export interface RedisTcpCoordinatorOptions {
  /** `redis://[user:password@]host:port[/db]`, or `rediss://…` for TLS. */
  url: string
  /** Prefix of every key, e.g. `turnline:` → `turnline:lease:<sid>`. Default `turnline:`. */
  namespace?: string
  ids?: Ids
  /** Lifetime of `tip:<sid>`, refreshed on every write; 0 keeps it forever. Default 30 days. */
  tipTtlSeconds?: number
  /** How long a connection attempt may take (default 5000 ms). */
  connectTimeoutMs?: number
}

/**
 * Coordinator on a plain Redis server over TCP (ioredis), for deployments that run their own
 * Redis (Docker Compose, ElastiCache, Memorystore) instead of Upstash's REST API. The same Lua
 * scripts as the Upstash adapter, each one EVAL: an ordinary turn is `beginTurn` plus `endTurn`,
 * two round trips. Node and Lambda only (it needs TCP sockets).
 *
 * A lost connection is retried once per command (then the command fails retryable
 * `coordinator_unavailable`); every script is safe to resend.
 */
export class RedisTcpCoordinator implements Coordinator {
  readonly #redis: Redis
  readonly #ns: string
  readonly #ids: Ids
  readonly #tipTtl: string
  #requests = 0
  #lastConnectionError: string | undefined

  constructor(options: RedisTcpCoordinatorOptions) {
    this.#redis = new Redis(options.url, {
      lazyConnect: true,
      connectTimeout: options.connectTimeoutMs ?? 5000,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    })
    // Connection errors surface on the commands that fail; keep the last one for their message.
    this.#redis.on('error', (error: Error) => {
      this.#lastConnectionError = error.message
    })
    this.#redis.on('ready', () => {
      this.#lastConnectionError = undefined
    })
    this.#ns = options.namespace ?? 'turnline:'
    this.#ids = options.ids ?? randomIds
    const tipTtl = options.tipTtlSeconds ?? 30 * 86_400
    if (tipTtl !== 0) checkPositiveInteger('tipTtlSeconds', tipTtl)
    this.#tipTtl = String(tipTtl)
  }

  /** Commands sent so far (each is one round trip: nothing is pipelined). */
  get requestCount(): number {
    return this.#requests
  }

  /** Closes the connection (pending commands finish first). */
  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect())
  }

  async beginTurn(request: BeginTurnRequest): Promise<BeginTurnResult> {
    checkBeginTurn(request)
    const { sessionId } = request
    const keys = [
      this.#key('lease', sessionId),
      this.#key('tip', sessionId),
      this.#key('intents', sessionId),
    ]
    if (request.idempotencyKey !== undefined) {
      keys.push(this.#key('idem', idempotencyKey(request.tenant, request.idempotencyKey)))
    }
    const token = this.#ids.token()
    const reply = await this.#eval('beginTurn', scripts.BEGIN_TURN, keys, [
      token,
      String(request.leaseMs),
    ])
    const [status, second, third] = asArray(reply, 'beginTurn')
    if (status === 'replay') return { status, record: parseRecord(second) }
    const tip = parseTip(second)
    if (status === 'acquired') {
      return {
        status,
        lease: { sessionId, token },
        tip,
        intents: decodeIntents(third, 'beginTurn'),
      }
    }
    if (status === 'busy') {
      const pttl = asInteger(third, 'beginTurn')
      return { status, retryAfterMs: pttl > 0 ? pttl : request.leaseMs, tip }
    }
    throw corrupt('beginTurn', reply)
  }

  async renewLease(lease: Lease, leaseMs: number): Promise<boolean> {
    checkPositiveInteger('leaseMs', leaseMs)
    const reply = await this.#eval(
      'renewLease',
      scripts.RENEW_LEASE,
      [this.#key('lease', lease.sessionId)],
      [lease.token, String(leaseMs)],
    )
    return asInteger(reply, 'renewLease') === 1
  }

  async endTurn(request: EndTurnRequest): Promise<void> {
    checkEndTurn(request)
    const { lease, idempotency } = request
    const keys = [
      this.#key('lease', lease.sessionId),
      this.#key('tip', lease.sessionId),
      this.#key('intents', lease.sessionId),
    ]
    let record = ''
    if (idempotency !== undefined) {
      keys.push(this.#key('idem', idempotencyKey(request.tenant, idempotency.key)))
      record = JSON.stringify({ v: 1, ...pickRecord(idempotency.record) })
    }
    const ttl = idempotency?.ttlSeconds ?? DEFAULT_IDEMPOTENCY_TTL_SECONDS
    await this.#eval('endTurn', scripts.END_TURN, keys, [
      lease.token,
      request.tip === undefined ? '' : String(request.tip),
      this.#tipTtl,
      record,
      String(ttl),
      ...(request.ackIntents ?? []),
    ])
  }

  async releaseLease(lease: Lease): Promise<void> {
    await this.#eval(
      'releaseLease',
      scripts.RELEASE_LEASE,
      [this.#key('lease', lease.sessionId)],
      [lease.token],
    )
  }

  async requestCancel(sessionId: string, ttlMs: number): Promise<void> {
    checkPositiveInteger('ttlMs', ttlMs)
    await this.#call('requestCancel', () =>
      this.#redis.set(this.#key('cancel', sessionId), '1', 'PX', ttlMs),
    )
  }

  async cancelRequested(sessionId: string): Promise<boolean> {
    const reply = await this.#call('cancelRequested', () =>
      this.#redis.get(this.#key('cancel', sessionId)),
    )
    return reply !== null && reply !== undefined
  }

  async getTip(sessionId: string): Promise<number | null> {
    const reply = await this.#call('getTip', () => this.#redis.get(this.#key('tip', sessionId)))
    return parseTip(reply)
  }

  async setTip(sessionId: string, batch: number): Promise<void> {
    checkBatch(batch)
    await this.#eval(
      'setTip',
      scripts.SET_TIP,
      [this.#key('tip', sessionId)],
      [String(batch), this.#tipTtl],
    )
  }

  async enqueueIntent(
    sessionId: string,
    intent: QueuedIntent,
    capacity = DEFAULT_INTENT_CAPACITY,
  ): Promise<EnqueueIntentResult> {
    checkIntent(intent)
    checkPositiveInteger('capacity', capacity)
    const reply = await this.#eval(
      'enqueueIntent',
      scripts.ENQUEUE_INTENT,
      [this.#key('intents', sessionId)],
      [intent.id, scripts.encodeIntentEntry(intent.id, intent.text), String(capacity)],
    )
    const [status, pending] = asArray(reply, 'enqueueIntent')
    if (status === 'accepted') return { status, pending: asInteger(pending, 'enqueueIntent') }
    if (status === 'full') return { status, capacity }
    throw corrupt('enqueueIntent', reply)
  }

  async pendingIntents(sessionId: string): Promise<QueuedIntent[]> {
    const reply = await this.#call('pendingIntents', () =>
      this.#redis.lrange(this.#key('intents', sessionId), 0, -1),
    )
    return decodeIntents(reply, 'pendingIntents')
  }

  async ackIntents(sessionId: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0
    const reply = await this.#eval(
      'ackIntents',
      scripts.ACK_INTENTS,
      [this.#key('intents', sessionId)],
      [...ids],
    )
    return asInteger(reply, 'ackIntents')
  }

  #key(kind: 'lease' | 'tip' | 'idem' | 'intents' | 'cancel', id: string): string {
    return `${this.#ns}${kind}:${id}`
  }

  #eval(operation: string, script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#call(operation, () => this.#redis.eval(script, keys.length, ...keys, ...args))
  }

  async #call(operation: string, run: () => Promise<unknown>): Promise<unknown> {
    this.#requests += 1
    try {
      return await run()
    } catch (error) {
      throw toRedisTcpError(error, operation, this.#lastConnectionError)
    }
  }
}
