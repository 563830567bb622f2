import type { InputArtifactRef } from '../contract/turn-input-record.ts'
import type { HeldRetryAfter } from '../shared/held-retry-after.ts'
import type { ActivityIndex, ActivityTouch } from './activity-index.ts'
import type { PlaceBook } from './place-holds.ts'

/**
 * Coordinator: hot coordination state (Redis/Upstash in production). Never the only copy of
 * accepted data, except pending intents. Shaped around a turn so an ordinary turn costs two
 * round trips: `beginTurn` (lease + tip + idempotency lookup + pending intents) and `endTurn`
 * (tip + idempotency record + acknowledged intents + the activity index + lease release).
 */
export interface Lease {
  sessionId: string
  /**
   * Fencing token, `<acquired epoch ms>.<random>` (`stampedLeaseId`): only its holder may renew or
   * release; others read when the run began from it (`heldRetryAfter`).
   */
  token: string
}

/** A held lease as read (`readLease`). */
export interface StandingLease {
  /** Time until it lapses unless renewed (ms). */
  remainingMs: number
  /** When it was acquired (epoch ms), when its token says. */
  acquiredAtMs?: number | undefined
}

/** What an idempotency key resolved to: the committed outcome of the first attempt. */
export interface IdempotencyRecord {
  sessionId: string
  turnId: string
  /** Batch that committed the outcome. */
  batch: number
  /** Opaque JSON of the first response, returned verbatim on retries. */
  response: string
}

export interface BeginTurnRequest {
  sessionId: string
  tenant: string
  leaseMs: number
  idempotencyKey?: string
}

export type BeginTurnResult =
  | { status: 'acquired'; lease: Lease; tip: number | null; intents: QueuedIntent[] }
  /** Held by a running turn: when to retry, and what the lease says of it (`heldRetryAfter`). */
  | ({ status: 'busy'; tip: number | null } & HeldRetryAfter)
  | { status: 'replay'; record: IdempotencyRecord }

export interface EndTurnRequest {
  lease: Lease
  tenant: string
  /** Highest batch now committed; the stored tip never regresses. */
  tip?: number
  /** Stored with SET NX: the first outcome wins. `ttlSeconds` defaults to 24 h. */
  idempotency?: { key: string; record: IdempotencyRecord; ttlSeconds?: number }
  /** Intents applied by the committed batches: removed from the pending queue. */
  ackIntents?: readonly string[]
  /** The step committed something: the session moves up the activity index (`touchActivity`). */
  activity?: ActivityTouch
}

/** How long an idempotency record lives when `ttlSeconds` is not given (24 h). */
export const DEFAULT_IDEMPOTENCY_TTL_SECONDS = 86_400

/** How long `tip:<sid>` lives after its last write when a coordinator is given no lifetime (30 days). */
export const DEFAULT_TIP_TTL_SECONDS = 30 * 86_400

/** A steering follow-up (VT Code `QueuedFollowUpIntent`). */
export interface QueuedIntent {
  /** UUIDv4 in practice; any 1–128 characters of `[A-Za-z0-9._:-]`. */
  id: string
  text: string
  /**
   * The follow-up's text was over the inline limit: kept whole as this artifact of the session
   * when it was accepted, `text` is its preview (src/core/turn/kept-input.ts).
   */
  artifacts?: InputArtifactRef[]
}

/** VT Code `MAX_QUEUED_FOLLOW_UP_INTENTS`: queued plus in flight (not yet acknowledged). */
export const DEFAULT_INTENT_CAPACITY = 16

export type EnqueueIntentResult =
  | { status: 'accepted'; pending: number }
  | { status: 'full'; capacity: number }

export interface Coordinator extends ActivityIndex, PlaceBook {
  beginTurn(request: BeginTurnRequest): Promise<BeginTurnResult>
  /** Extends a held lease; false when it was lost (expired and taken). */
  renewLease(lease: Lease, leaseMs: number): Promise<boolean>
  endTurn(request: EndTurnRequest): Promise<void>
  /** Releases a lease without recording anything (failed or aborted turn). */
  releaseLease(lease: Lease): Promise<void>
  /**
   * The idempotency record `endTurn` stored under `key` (as `beginTurn` is given it) while it
   * lives, read only (one GET): what `beginTurn` with that key would replay.
   */
  readIdempotency(tenant: string, key: string): Promise<IdempotencyRecord | undefined>
  getTip(sessionId: string): Promise<number | null>
  /**
   * The session's lease as it stands, read only: the time it has left and, from its token, when
   * it was acquired; undefined when nobody holds it. A turn's heartbeat renews it every third of
   * its life, so a lease not renewed for two of those was left by a run that stopped.
   */
  readLease(sessionId: string): Promise<StandingLease | undefined>
  /** Raises the tip to `batch`; a lower value leaves it unchanged. */
  setTip(sessionId: string, batch: number): Promise<void>

  /**
   * Forgets the session (its data was erased): its tip, pending intents, cancellation flag and
   * the idempotency records of `idempotency.keys` (the keys its batches were committed under, as
   * `beginTurn` got them). The lease stays with its holder (the deleter releases it after).
   */
  forgetSession(
    sessionId: string,
    idempotency: { tenant: string; keys: readonly string[] },
  ): Promise<void>

  /** Asks the turn running on the session to stop (a flag that lives `ttlMs`). */
  requestCancel(sessionId: string, ttlMs: number): Promise<void>
  /** True while a cancellation is requested (the running turn polls it). */
  cancelRequested(sessionId: string): Promise<boolean>

  /**
   * Appends a steering intent to `intents:<sid>` atomically: never more than `capacity` pending
   * (default 16). An id already pending is accepted again without a second copy.
   */
  enqueueIntent(
    sessionId: string,
    intent: QueuedIntent,
    capacity?: number,
  ): Promise<EnqueueIntentResult>
  /** Pending intents (queued and in flight), oldest first. */
  pendingIntents(sessionId: string): Promise<QueuedIntent[]>
  /**
   * Removes exactly the given ids (call after the batch that applied them committed); unknown ids
   * are ignored. Returns how many were removed.
   */
  ackIntents(sessionId: string, ids: readonly string[]): Promise<number>

  /**
   * Records `key` for `ttlMs` unless it is already recorded: true the first time, false while
   * the record lives (a replay). A resent call that already won still answers true. Keys are
   * 1–512 characters; the caller namespaces them (e.g. `runner-callback:<message id>`).
   */
  claimOnce(key: string, ttlMs: number): Promise<boolean>
  /** True while a record `claimOnce` made of `key` lives; reads only, never records it. */
  isClaimed(key: string): Promise<boolean>

  /**
   * Records `claim` as the holder of this coordinator's key namespace unless a holder is
   * recorded already, and returns the holder in force (`claim` itself the first time). Kept
   * without expiry: which deployment a namespace belongs to (functions/deployment-claim.ts).
   */
  claimNamespace(claim: string): Promise<string>
}
