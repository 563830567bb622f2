/**
 * Coordinator: hot coordination state (Redis/Upstash in production). Never the only copy of
 * accepted data, except pending intents. Shaped around a turn so an ordinary turn costs two
 * round trips: `beginTurn` (lease + tip + idempotency lookup) and `endTurn` (tip + idempotency
 * record + lease release).
 */
export interface Lease {
  sessionId: string
  /** Random fencing token; only its holder may renew or release. */
  token: string
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
  | { status: 'acquired'; lease: Lease; tip: number | null }
  | { status: 'busy'; retryAfterMs: number; tip: number | null }
  | { status: 'replay'; record: IdempotencyRecord }

export interface EndTurnRequest {
  lease: Lease
  tenant: string
  /** Highest batch now committed; the stored tip never regresses. */
  tip?: number
  idempotency?: { key: string; record: IdempotencyRecord; ttlSeconds: number }
}

export interface Coordinator {
  beginTurn(request: BeginTurnRequest): Promise<BeginTurnResult>
  /** Extends a held lease; false when it was lost (expired and taken). */
  renewLease(lease: Lease, leaseMs: number): Promise<boolean>
  endTurn(request: EndTurnRequest): Promise<void>
  /** Releases a lease without recording anything (failed or aborted turn). */
  releaseLease(lease: Lease): Promise<void>
  getTip(sessionId: string): Promise<number | null>
  setTip(sessionId: string, batch: number): Promise<void>
}
