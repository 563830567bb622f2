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
  copyIntent,
} from '../../src/ports/coordinator-checks.ts'
import {
  heldRetryAfter,
  leaseAcquiredAt,
  stampedLeaseId,
} from '../../src/shared/held-retry-after.ts'
import { randomIds } from '../../src/shared/random-ids.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { idempotencyKey } from '../shared/idempotency-key.ts'
import { MemoryPlaceHolds } from './memory-place-holds.ts'

export interface MemoryCoordinatorOptions {
  clock?: Clock
  ids?: Ids
  /** Lifetime of `tip:<sid>`, refreshed on every write; 0 keeps it forever. Default 30 days. */
  tipTtlSeconds?: number
}

interface Expiring<T> {
  value: T
  /** Epoch ms; null never expires. */
  expiresAt: number | null
}

/**
 * In-process Coordinator with the semantics of the Redis one (lease SET NX PX, compare-token
 * renew/release, never-regressing tip, first-outcome-wins idempotency, bounded intent queue).
 * Every method runs synchronously between awaits, so each is atomic like a Lua script.
 * Web-standard only: also runs in workerd and Deno.
 */
export class MemoryCoordinator extends MemoryPlaceHolds implements Coordinator {
  readonly #clock: Clock
  readonly #ids: Ids
  readonly #tipTtlMs: number
  readonly #leases = new Map<string, Expiring<string>>()
  readonly #tips = new Map<string, Expiring<number>>()
  readonly #cancels = new Map<string, Expiring<boolean>>()
  readonly #idempotency = new Map<string, Expiring<IdempotencyRecord>>()
  readonly #intents = new Map<string, QueuedIntent[]>()
  readonly #claims = new Map<string, Expiring<true>>()
  #claimSweepAt = 0
  #namespaceClaim: string | undefined

  constructor(options: MemoryCoordinatorOptions = {}) {
    super(options.clock ?? systemClock)
    this.#clock = options.clock ?? systemClock
    this.#ids = options.ids ?? randomIds
    this.#tipTtlMs = (options.tipTtlSeconds ?? DEFAULT_TIP_TTL_SECONDS) * 1000
  }

  async claimNamespace(claim: string): Promise<string> {
    this.#namespaceClaim ??= claim
    return this.#namespaceClaim
  }

  async beginTurn(request: BeginTurnRequest): Promise<BeginTurnResult> {
    checkBeginTurn(request)
    if (request.idempotencyKey !== undefined) {
      const key = idempotencyKey(request.tenant, request.idempotencyKey)
      const record = this.#live(this.#idempotency, key)
      if (record !== undefined) return { status: 'replay', record: { ...record } }
    }
    const tip = this.#live(this.#tips, request.sessionId) ?? null
    const held = this.#liveEntry(this.#leases, request.sessionId)
    if (held !== undefined) {
      const remaining = held.expiresAt === null ? request.leaseMs : held.expiresAt - this.#now()
      const lease = {
        remainingMs: remaining,
        ttlMs: request.leaseMs,
        acquiredAtMs: leaseAcquiredAt(held.value),
      }
      return { status: 'busy', tip, ...heldRetryAfter(lease, this.#now()) }
    }
    const token = stampedLeaseId(this.#now(), this.#ids.token())
    this.#leases.set(request.sessionId, { value: token, expiresAt: this.#now() + request.leaseMs })
    const intents = await this.pendingIntents(request.sessionId)
    return { status: 'acquired', lease: { sessionId: request.sessionId, token }, tip, intents }
  }

  async renewLease(lease: Lease, leaseMs: number): Promise<boolean> {
    checkPositiveInteger('leaseMs', leaseMs)
    if (this.#live(this.#leases, lease.sessionId) !== lease.token) return false
    this.#leases.set(lease.sessionId, { value: lease.token, expiresAt: this.#now() + leaseMs })
    return true
  }

  async endTurn(request: EndTurnRequest): Promise<void> {
    checkEndTurn(request)
    const idem = request.idempotency
    if (request.tip !== undefined) this.#raiseTip(request.lease.sessionId, request.tip)
    if (idem !== undefined) {
      const key = idempotencyKey(request.tenant, idem.key)
      if (this.#live(this.#idempotency, key) === undefined) {
        const ttlMs = (idem.ttlSeconds ?? DEFAULT_IDEMPOTENCY_TTL_SECONDS) * 1000
        this.#idempotency.set(key, { value: { ...idem.record }, expiresAt: this.#now() + ttlMs })
      }
    }
    if (request.ackIntents?.length)
      await this.ackIntents(request.lease.sessionId, request.ackIntents)
    if (request.activity) this.touch(request.activity)
    this.#release(request.lease)
  }

  async releaseLease(lease: Lease): Promise<void> {
    this.#release(lease)
  }

  async forgetSession(
    sessionId: string,
    idempotency: { tenant: string; keys: readonly string[] },
  ): Promise<void> {
    for (const key of idempotency.keys) {
      this.#idempotency.delete(idempotencyKey(idempotency.tenant, key))
    }
    this.#tips.delete(sessionId)
    this.#intents.delete(sessionId)
    this.#cancels.delete(sessionId)
  }

  async requestCancel(sessionId: string, ttlMs: number): Promise<void> {
    checkPositiveInteger('ttlMs', ttlMs)
    this.#cancels.set(sessionId, { value: true, expiresAt: this.#now() + ttlMs })
  }

  async cancelRequested(sessionId: string): Promise<boolean> {
    return this.#live(this.#cancels, sessionId) === true
  }

  async getTip(sessionId: string): Promise<number | null> {
    return this.#live(this.#tips, sessionId) ?? null
  }

  async readLease(sessionId: string): Promise<StandingLease | undefined> {
    const held = this.#liveEntry(this.#leases, sessionId)
    if (held === undefined) return undefined
    return {
      remainingMs: held.expiresAt === null ? Number.MAX_SAFE_INTEGER : held.expiresAt - this.#now(),
      acquiredAtMs: leaseAcquiredAt(held.value),
    }
  }

  async setTip(sessionId: string, batch: number): Promise<void> {
    checkBatch(batch)
    this.#raiseTip(sessionId, batch)
  }

  async enqueueIntent(
    sessionId: string,
    intent: QueuedIntent,
    capacity = DEFAULT_INTENT_CAPACITY,
  ): Promise<EnqueueIntentResult> {
    checkIntent(intent)
    checkPositiveInteger('capacity', capacity)
    const queue = this.#intents.get(sessionId) ?? []
    if (queue.some((queued) => queued.id === intent.id)) {
      return { status: 'accepted', pending: queue.length }
    }
    if (queue.length >= capacity) return { status: 'full', capacity }
    queue.push(copyIntent(intent))
    this.#intents.set(sessionId, queue)
    return { status: 'accepted', pending: queue.length }
  }

  async pendingIntents(sessionId: string): Promise<QueuedIntent[]> {
    return (this.#intents.get(sessionId) ?? []).map(copyIntent)
  }

  async ackIntents(sessionId: string, ids: readonly string[]): Promise<number> {
    const queue = this.#intents.get(sessionId)
    if (queue === undefined || ids.length === 0) return 0
    const acked = new Set(ids)
    const kept = queue.filter((intent) => !acked.has(intent.id))
    if (kept.length === 0) this.#intents.delete(sessionId)
    else this.#intents.set(sessionId, kept)
    return queue.length - kept.length
  }

  async claimOnce(key: string, ttlMs: number): Promise<boolean> {
    checkClaimKey(key)
    checkPositiveInteger('ttlMs', ttlMs)
    if (this.#live(this.#claims, key) !== undefined) return false
    this.#claims.set(key, { value: true, expiresAt: this.#now() + ttlMs })
    this.#sweepClaims()
    return true
  }

  async readIdempotency(tenant: string, key: string): Promise<IdempotencyRecord | undefined> {
    const record = this.#live(this.#idempotency, idempotencyKey(tenant, key))
    return record === undefined ? undefined : { ...record }
  }

  async isClaimed(key: string): Promise<boolean> {
    checkClaimKey(key)
    return this.#live(this.#claims, key) !== undefined
  }

  /** Drops expired claims now and then, so a long-lived process does not keep them all. */
  #sweepClaims(): void {
    const now = this.#now()
    if (now < this.#claimSweepAt) return
    this.#claimSweepAt = now + 10_000
    for (const [key, entry] of this.#claims) {
      if (entry.expiresAt !== null && entry.expiresAt <= now) this.#claims.delete(key)
    }
  }

  #raiseTip(sessionId: string, batch: number): void {
    const current = this.#live(this.#tips, sessionId)
    const value = current === undefined ? batch : Math.max(current, batch)
    const expiresAt = this.#tipTtlMs > 0 ? this.#now() + this.#tipTtlMs : null
    this.#tips.set(sessionId, { value, expiresAt })
  }

  #release(lease: Lease): void {
    if (this.#live(this.#leases, lease.sessionId) === lease.token) {
      this.#leases.delete(lease.sessionId)
    }
  }

  #now(): number {
    return this.#clock.now()
  }

  #liveEntry<T>(map: Map<string, Expiring<T>>, key: string): Expiring<T> | undefined {
    const entry = map.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt !== null && entry.expiresAt <= this.#now()) {
      map.delete(key)
      return undefined
    }
    return entry
  }

  #live<T>(map: Map<string, Expiring<T>>, key: string): T | undefined {
    return this.#liveEntry(map, key)?.value
  }
}
