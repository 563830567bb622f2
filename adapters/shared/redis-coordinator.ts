import type { Clock, Ids } from '../../src/ports/clock.ts'
import {
  type BeginTurnRequest,
  type BeginTurnResult,
  type Coordinator,
  DEFAULT_IDEMPOTENCY_TTL_SECONDS,
  DEFAULT_INTENT_CAPACITY,
  DEFAULT_TIP_TTL_SECONDS,
  type EndTurnRequest,
  type EnqueueIntentResult,
  type IdempotencyRecord,
  type Lease,
  type QueuedIntent,
  type StandingLease,
} from '../../src/ports/coordinator.ts'
import {
  checkBatch,
  checkBeginTurn,
  checkClaimKey,
  checkEndTurn,
  checkIntent,
  checkPositiveInteger,
} from '../../src/ports/coordinator-checks.ts'
import {
  heldRetryAfter,
  leaseAcquiredAt,
  stampedLeaseId,
} from '../../src/shared/held-retry-after.ts'
import { randomIds } from '../../src/shared/random-ids.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import {
  asArray,
  asInteger,
  corrupt,
  decodeIntents,
  parseRecord,
  parseTip,
  pickRecord,
} from './coordinator-redis-replies.ts'
import * as scripts from './coordinator-redis-scripts.ts'
import { idempotencyKey } from './idempotency-key.ts'
import { callRedis, type RedisCommands } from './redis-commands.ts'
import type { RedisCoordinatorOptions } from './redis-coordinator-options.ts'
import { DEFAULT_REDIS_PREFIX } from './redis-namespace.ts'
import { RedisPlaceHolds } from './redis-place-holds.ts'

/**
 * The Coordinator on Redis, whatever carries the commands: every operation is one Lua script of
 * `coordinator-redis-scripts.ts` (EVAL) or one plain read, so an ordinary turn is `beginTurn`
 * plus `endTurn`, two round trips (the activity index, its base class, rides in `endTurn`). The
 * same keys over every transport: the Upstash and the TCP adapters (which extend this class with
 * their transport) can serve one database. Every script is safe to resend (under the deadline).
 */
export class RedisCoordinator<C extends RedisCommands = RedisCommands>
  extends RedisPlaceHolds<C>
  implements Coordinator
{
  readonly #ns: string
  readonly #ids: Ids
  readonly #clock: Clock
  readonly #tipTtl: string

  constructor(options: RedisCoordinatorOptions<C>) {
    const ns = options.namespace ?? DEFAULT_REDIS_PREFIX
    super(options.commands, options.deadline, ns, options.clock ?? systemClock)
    this.#ns = ns
    this.#ids = options.ids ?? randomIds
    this.#clock = options.clock ?? systemClock
    const tipTtl = options.tipTtlSeconds ?? DEFAULT_TIP_TTL_SECONDS
    if (tipTtl !== 0) checkPositiveInteger('tipTtlSeconds', tipTtl)
    this.#tipTtl = String(tipTtl)
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
    const token = stampedLeaseId(this.#clock.now(), this.#ids.token())
    const reply = await this.#eval('beginTurn', scripts.BEGIN_TURN, keys, [
      token,
      String(request.leaseMs),
    ])
    const [status, second, third, holder] = asArray(reply, 'beginTurn')
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
      const held = heldRetryAfter(
        {
          remainingMs: pttl > 0 ? pttl : request.leaseMs,
          ttlMs: request.leaseMs,
          acquiredAtMs: typeof holder === 'string' ? leaseAcquiredAt(holder) : undefined,
        },
        this.#clock.now(),
      )
      return { status, tip, ...held }
    }
    throw corrupt('beginTurn', reply)
  }

  async renewLease(lease: Lease, leaseMs: number): Promise<boolean> {
    checkPositiveInteger('leaseMs', leaseMs)
    const key = [this.#key('lease', lease.sessionId)]
    const args = [lease.token, String(leaseMs)]
    const reply = await this.#eval('renewLease', scripts.RENEW_LEASE, key, args)
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
    const touch = request.activity && this.touchArgs(request.activity)
    const tip = request.tip === undefined ? '' : String(request.tip)
    const args = [lease.token, tip, this.#tipTtl, record, String(ttl)]
    args.push(...(touch?.args ?? ['', '', '']), ...(request.ackIntents ?? []))
    await this.#eval('endTurn', scripts.END_TURN, [...keys, ...(touch?.keys ?? [])], args)
  }

  async releaseLease(lease: Lease): Promise<void> {
    await this.#eval(
      'releaseLease',
      scripts.RELEASE_LEASE,
      [this.#key('lease', lease.sessionId)],
      [lease.token],
    )
  }

  async forgetSession(
    sessionId: string,
    idempotency: { tenant: string; keys: readonly string[] },
  ): Promise<void> {
    const kinds = ['tip', 'intents', 'cancel'] as const
    const keys = kinds.map((kind) => this.#key(kind, sessionId))
    for (const key of idempotency.keys) {
      keys.push(this.#key('idem', idempotencyKey(idempotency.tenant, key)))
    }
    await this.#eval('forgetSession', scripts.FORGET_SESSION, keys, [])
  }

  async requestCancel(sessionId: string, ttlMs: number): Promise<void> {
    checkPositiveInteger('ttlMs', ttlMs)
    await this.#call('requestCancel', () =>
      this.commands.setPx(this.#key('cancel', sessionId), '1', ttlMs),
    )
  }

  cancelRequested(sessionId: string): Promise<boolean> {
    return this.#exists('cancelRequested', this.#key('cancel', sessionId))
  }

  async getTip(sessionId: string): Promise<number | null> {
    const reply = await this.#call('getTip', () => this.commands.get(this.#key('tip', sessionId)))
    return parseTip(reply)
  }

  async readLease(sessionId: string): Promise<StandingLease | undefined> {
    const key = [this.#key('lease', sessionId)]
    const [holder, pttl] = asArray(
      await this.#eval('readLease', scripts.READ_LEASE, key, []),
      'readLease',
    )
    if (typeof holder !== 'string') return undefined
    const left = asInteger(pttl, 'readLease') // -1: no expiry (never so written)
    const remainingMs = left === -1 ? Number.MAX_SAFE_INTEGER : Math.max(0, left)
    return { remainingMs, acquiredAtMs: leaseAcquiredAt(holder) }
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
      [intent.id, scripts.encodeIntentEntry(intent), String(capacity)],
    )
    const [status, pending] = asArray(reply, 'enqueueIntent')
    if (status === 'accepted') return { status, pending: asInteger(pending, 'enqueueIntent') }
    if (status === 'full') return { status, capacity }
    throw corrupt('enqueueIntent', reply)
  }

  async pendingIntents(sessionId: string): Promise<QueuedIntent[]> {
    const reply = await this.#call('pendingIntents', () =>
      this.commands.lrange(this.#key('intents', sessionId), 0, -1),
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

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    checkClaimKey(key)
    checkPositiveInteger('ttlMs', ttlMs)
    const args = [this.#ids.token(), String(ttlMs)]
    const reply = await this.#eval('claimOnce', scripts.CLAIM_ONCE, [this.#key('once', key)], args)
    return asInteger(reply, 'claimOnce') === 1
  }

  async readIdempotency(tenant: string, key: string): Promise<IdempotencyRecord | undefined> {
    const id = this.#key('idem', idempotencyKey(tenant, key))
    const reply = await this.#call('readIdempotency', () => this.commands.get(id))
    return reply === null || reply === undefined ? undefined : parseRecord(reply)
  }

  async isClaimed(key: string): Promise<boolean> {
    checkClaimKey(key)
    return this.#exists('isClaimed', this.#key('once', key))
  }

  async claimNamespace(claim: string): Promise<string> {
    const reply = await this.#eval(
      'claimNamespace',
      scripts.CLAIM_NAMESPACE,
      [`${this.#ns}deployment`],
      [claim],
    )
    if (typeof reply !== 'string') throw corrupt('claimNamespace', reply)
    return reply
  }

  #key(kind: 'lease' | 'tip' | 'idem' | 'intents' | 'cancel' | 'once', id: string): string {
    return `${this.#ns}${kind}:${id}`
  }

  async #exists(operation: string, key: string): Promise<boolean> {
    const reply = await this.#call(operation, () => this.commands.get(key))
    return reply !== null && reply !== undefined
  }

  #eval(operation: string, script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.#call(operation, () => this.commands.eval(script, keys, args))
  }

  #call(operation: string, run: () => Promise<unknown>): Promise<unknown> {
    return callRedis(this.deadline, this.commands, operation, run)
  }
}
