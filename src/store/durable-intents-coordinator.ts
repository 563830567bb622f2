import { isTurnlineError, TurnlineError } from '../contract/errors.ts'
import {
  parsePendingIntent,
  pendingIntentOf,
  serializePendingIntent,
} from '../contract/pending-intent.ts'
import type { Clock } from '../ports/clock.ts'
import type {
  BeginTurnRequest,
  BeginTurnResult,
  Coordinator,
  EndTurnRequest,
  EnqueueIntentResult,
  Lease,
  QueuedIntent,
  StandingLease,
} from '../ports/coordinator.ts'
import { DEFAULT_INTENT_CAPACITY } from '../ports/coordinator.ts'
import { checkEndTurn, checkIntent, checkPositiveInteger } from '../ports/coordinator-checks.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { systemClock } from '../shared/system-clock.ts'
import { toBytes } from './json-bytes.ts'
import { listAll } from './list-all.ts'
import type { SessionLocator } from './session-locator.ts'
import type { SessionStore } from './session-store.ts'

/** Where a session's pending intents are kept (a folder key ending in '/'), or undefined. */
export type IntentFolders = (sessionId: string) => Promise<string | undefined>

export interface DurableIntentsOptions {
  /** The coordinator everything else (and the hot copy of the queue) goes to. */
  inner: Coordinator
  objects: ObjectStore
  folderOf: IntentFolders
  clock?: Clock
}

interface Queue {
  /** undefined: the id names no session folder; its intents stay in memory only. */
  folder: string | undefined
  /** The number the next intent object gets. */
  next: number
  /** Pending intent id → its object. */
  keys: Map<string, string>
}

/** Queues kept loaded at most; queues with nothing pending are dropped beyond it. */
const MAX_LOADED = 4096
/** Loading takes every stored intent, even beyond the capacity (another process wrote them). */
const LOAD_CAPACITY = 1_000_000

const pad = (n: number) => String(n).padStart(10, '0')

/**
 * A coordinator whose pending intents survive a restart although it keeps them in memory (the
 * in-process coordinator of the embedded default): each accepted intent is also a create-only
 * object in its session's folder (`intents/<n>.json`, contract/pending-intent.ts), written before
 * the intent is accepted, and deleted once the batch that applied it committed (`endTurn` or
 * `ackIntents` with its id). A process loads a session's stored intents, in the order they were
 * accepted, the first time it touches the session. The in-memory queue stays the hot copy that
 * every turn reads, so an ordinary turn costs no extra I/O; the 16-intent cap is checked in
 * order with the writes (one enqueue at a time per session).
 *
 * Exactly once is the engine's, as with Redis: a batch records the ids it applied, and an
 * intent whose object outlived its batch (a crash before the delete, a delete that failed) is
 * found applied at the next turn boundary and acknowledged without being applied again. A
 * failed delete leaves the intent pending, so it is acknowledged again later.
 */
export class DurableIntentsCoordinator implements Coordinator {
  readonly #inner: Coordinator
  readonly #objects: ObjectStore
  readonly #folderOf: IntentFolders
  readonly #clock: Clock
  readonly #queues = new Map<string, Promise<Queue>>()
  readonly #serial = new Map<string, Promise<unknown>>()

  constructor(options: DurableIntentsOptions) {
    this.#inner = options.inner
    this.#objects = options.objects
    this.#folderOf = options.folderOf
    this.#clock = options.clock ?? systemClock
  }

  /** The coordinator it adds durable intents to. */
  get inner(): Coordinator {
    return this.#inner
  }

  async beginTurn(request: BeginTurnRequest): Promise<BeginTurnResult> {
    await this.#load(request.sessionId)
    return this.#inner.beginTurn(request)
  }

  async endTurn(request: EndTurnRequest): Promise<void> {
    checkEndTurn(request)
    const ids = request.ackIntents
    if (!ids?.length) return this.#inner.endTurn(request)
    const ackIntents = await this.#remove(request.lease.sessionId, ids)
    return this.#inner.endTurn({ ...request, ackIntents })
  }

  async enqueueIntent(
    sessionId: string,
    intent: QueuedIntent,
    capacity = DEFAULT_INTENT_CAPACITY,
  ): Promise<EnqueueIntentResult> {
    return this.#serially(sessionId, async () => {
      const queue = await this.#load(sessionId)
      if (queue.folder === undefined) return this.#inner.enqueueIntent(sessionId, intent, capacity)
      checkIntent(intent)
      checkPositiveInteger('capacity', capacity)
      // Stored before any turn can see it: a turn applies only what a restart would still find.
      // The cap is checked first; enqueues of a session run one at a time and turns only take
      // intents away meanwhile, so the place checked is still free when the intent is queued.
      const pending = await this.#inner.pendingIntents(sessionId)
      if (!pending.some((queued) => queued.id === intent.id)) {
        if (pending.length >= capacity) return { status: 'full', capacity }
        await this.#persist(queue, intent)
      }
      return this.#inner.enqueueIntent(sessionId, intent, capacity)
    })
  }

  async pendingIntents(sessionId: string): Promise<QueuedIntent[]> {
    await this.#load(sessionId)
    return this.#inner.pendingIntents(sessionId)
  }

  async ackIntents(sessionId: string, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0
    return this.#inner.ackIntents(sessionId, await this.#remove(sessionId, ids))
  }

  renewLease(lease: Lease, leaseMs: number): Promise<boolean> {
    return this.#inner.renewLease(lease, leaseMs)
  }
  releaseLease(lease: Lease): Promise<void> {
    return this.#inner.releaseLease(lease)
  }
  getTip(sessionId: string): Promise<number | null> {
    return this.#inner.getTip(sessionId)
  }
  readLease(sessionId: string): Promise<StandingLease | undefined> {
    return this.#inner.readLease(sessionId)
  }
  setTip(sessionId: string, batch: number): Promise<void> {
    return this.#inner.setTip(sessionId, batch)
  }
  requestCancel(sessionId: string, ttlMs: number): Promise<void> {
    return this.#inner.requestCancel(sessionId, ttlMs)
  }
  /** Also deletes the stored intents: no later load brings them back. */
  async forgetSession(sessionId: string, idempotency: { tenant: string; keys: readonly string[] }) {
    const folder = await this.#folderOf(sessionId)
    const stored = folder === undefined ? [] : (await listAll(this.#objects, folder)).objects
    for (const { key } of stored) await this.#objects.delete(key)
    this.#queues.delete(sessionId)
    await this.#inner.forgetSession(sessionId, idempotency)
  }
  cancelRequested(sessionId: string): Promise<boolean> {
    return this.#inner.cancelRequested(sessionId)
  }
  touchActivity: Coordinator['touchActivity'] = (touch) => this.#inner.touchActivity(touch)
  scanActivity: Coordinator['scanActivity'] = (query) => this.#inner.scanActivity(query)
  missingActivity: Coordinator['missingActivity'] = (...a) => this.#inner.missingActivity(...a)
  backfillActivity: Coordinator['backfillActivity'] = (...a) => this.#inner.backfillActivity(...a)
  dropActivity: Coordinator['dropActivity'] = (...a) => this.#inner.dropActivity(...a)
  readPlaces: Coordinator['readPlaces'] = (...a) => this.#inner.readPlaces(...a)
  holdPlace: Coordinator['holdPlace'] = (...a) => this.#inner.holdPlace(...a)
  releasePlace: Coordinator['releasePlace'] = (...a) => this.#inner.releasePlace(...a)
  claimOnce(key: string, ttlMs: number): Promise<boolean> {
    return this.#inner.claimOnce(key, ttlMs)
  }
  readIdempotency: Coordinator['readIdempotency'] = (...a) => this.#inner.readIdempotency(...a)
  isClaimed(key: string): Promise<boolean> {
    return this.#inner.isClaimed(key)
  }
  claimNamespace(claim: string): Promise<string> {
    return this.#inner.claimNamespace(claim)
  }

  /** The session's queue, loaded from its folder on first use. */
  #load(sessionId: string): Promise<Queue> {
    let loading = this.#queues.get(sessionId)
    if (!loading) {
      this.#evictIdle()
      loading = this.#read(sessionId)
      this.#queues.set(sessionId, loading)
      loading.catch(() => this.#queues.delete(sessionId))
    }
    return loading
  }

  async #read(sessionId: string): Promise<Queue> {
    const folder = await this.#folderOf(sessionId)
    const queue: Queue = { folder, next: 0, keys: new Map() }
    if (folder === undefined) return queue
    const listed = (await listAll(this.#objects, folder)).objects
      .map(({ key }) => ({ key, n: numberOf(folder, key) }))
      .filter((entry): entry is { key: string; n: number } => entry.n !== undefined)
      .sort((a, b) => a.n - b.n)
    const bodies = await Promise.all(listed.map(({ key }) => this.#objects.get(key)))
    for (const [i, { key, n }] of listed.entries()) {
      queue.next = Math.max(queue.next, n + 1)
      const body = bodies[i]
      if (!body) continue // deleted meanwhile: acknowledged by another writer
      const stored = parsePendingIntent(body.body)
      const { id, text } = stored
      const artifacts = 'input_artifacts' in stored ? { artifacts: stored.input_artifacts } : {}
      await this.#inner.enqueueIntent(sessionId, { id, text, ...artifacts }, LOAD_CAPACITY)
      queue.keys.set(id, key)
    }
    return queue
  }

  /** Stores the intent (create-only, the next free number) before it is accepted. */
  async #persist(queue: Queue, intent: QueuedIntent): Promise<void> {
    const acceptedAt = new Date(this.#clock.now()).toISOString()
    const body = toBytes(serializePendingIntent(pendingIntentOf(intent, acceptedAt)))
    for (let attempt = 0; attempt < 32; attempt++) {
      const key = `${queue.folder}${pad(queue.next++)}.json`
      try {
        await this.#objects.put(key, body, { ifNoneMatch: '*', contentType: 'application/json' })
        queue.keys.set(intent.id, key)
        return
      } catch (error) {
        // another process took that number: the next one
        if (!isTurnlineError(error, 'conflict')) throw error
      }
    }
    throw new TurnlineError('conflict', 'could not find a free number for the intent')
  }

  /** Deletes the intents' objects; returns the ids to acknowledge (a failed delete keeps one). */
  async #remove(sessionId: string, ids: readonly string[]): Promise<string[]> {
    const queue = await this.#load(sessionId)
    const outcomes = await Promise.allSettled(
      ids.map(async (id) => {
        const key = queue.keys.get(id)
        if (key !== undefined) await this.#objects.delete(key)
        queue.keys.delete(id)
        return id
      }),
    )
    return outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []))
  }

  /** Runs the session's enqueues one at a time (the cap is checked, then the object written). */
  #serially<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#serial.get(sessionId) ?? Promise.resolve()
    const run = previous.then(work, work)
    const tail = run.catch(() => undefined)
    this.#serial.set(sessionId, tail)
    void tail.then(() => {
      if (this.#serial.get(sessionId) === tail) this.#serial.delete(sessionId)
    })
    return run
  }

  /** Drops loaded queues with nothing pending once there are many (a later use reloads one). */
  #evictIdle(): void {
    if (this.#queues.size < MAX_LOADED) return
    for (const [sessionId, loading] of this.#queues) {
      void loading.then((queue) => {
        if (queue.keys.size === 0 && !this.#serial.has(sessionId)) {
          this.#queues.delete(sessionId)
        }
      })
    }
  }
}

function numberOf(folder: string, key: string): number | undefined {
  const match = /^(\d{10})\.json$/.exec(key.slice(folder.length))
  return match ? Number(match[1]) : undefined
}

/**
 * Intent folders of sessions in `sessions`, for coordinator ids `<tenant>/<session id>` (the
 * engine's `coordinatorId`): `intents/` in the session's folder. Other ids, and sessions that do
 * not exist, have none.
 */
export function sessionIntentFolders(
  sessions: SessionStore,
  locator: SessionLocator,
): IntentFolders {
  return async (id) => {
    const slash = id.indexOf('/')
    if (slash < 1) return undefined
    try {
      const ref = await locator.locate(id.slice(0, slash), id.slice(slash + 1))
      return sessions.keys(ref).intentsPrefix
    } catch (error) {
      if (isTurnlineError(error, 'not_found', 'invalid_input')) return undefined
      throw error
    }
  }
}
