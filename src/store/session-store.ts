import { isTurnlineError, TurnlineError } from '../contract/errors.ts'
import { parseSessionManifest, type SessionManifest } from '../contract/session-manifest.ts'
import type { ThreadEvent } from '../contract/thread-event.ts'
import type { Clock } from '../ports/clock.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { systemClock } from '../shared/system-clock.ts'
import { AppendAfterName } from './append-after-name.ts'
import { CheckpointAhead } from './checkpoint-ahead.ts'
import { type CommitInput, type CommittedBatch, commitBatch, type Gzip } from './commit-batch.ts'
import { DeferredAppends } from './deferred-appends.ts'
import type { EventsFile } from './events-file-state.ts'
import { listAll } from './list-all.ts'
import { LocationCache } from './location-cache.ts'
import { manifestOf, rollupStateOf } from './manifest-sync.ts'
import { type EventPage, readSessionEvents } from './read-events.ts'
import { readBatches, rehydrate } from './rehydrate.ts'
import { applyRetention, type RetentionPolicy, type RetentionResult } from './retention.ts'
import { MAX_RETAINED_EVENTS } from './rollup.ts'
import { manifestAsOfLog } from './session-listing.ts'
import {
  type MaintenanceContext,
  pendingManifestSnapshot,
  prepareManifest,
  writeManifest,
} from './session-maintenance.ts'
import type { SessionRef } from './session-ref.ts'
import { assertTenant, SessionKeys, workspaceSessionsPrefix } from './session-ref.ts'
import { emptySnapshot, type SessionSnapshot } from './session-snapshot.ts'
import { SnapshotCache } from './snapshot-cache.ts'
import { listWorkspaces, type WorkspaceCount } from './workspace-listing.ts'

export interface SessionStoreOptions {
  store: ObjectStore
  /** Key prefix in front of every tenant folder ('' for none). */
  prefix?: string
  clock?: Clock
  /** Write a state checkpoint after this many batches (also after every history reset). */
  checkpointEvery?: number
  /** See CHECKPOINT_HISTORY_BATCHES. */
  checkpointHistoryBatches?: number
  maxRetainedEvents?: number
  /** Snapshots kept warm per process (0 disables). */
  cacheSize?: number
  gzip?: Gzip
}

export interface CommitResult {
  snapshot: SessionSnapshot
  batch: number
  firstSeq: number
  /** A failure after the commit point (checkpoint, rollup, manifest): the commit stands and the
   * next writer or reader repairs it; reported so callers can log it. */
  maintenanceError?: unknown
  /** With `overlapManifest`: settles when the manifest write is done, with its error if any
   * (never rejects). The commit stands either way. */
  manifestWritten?: Promise<unknown>
}

/**
 * The session-log protocol on an ObjectStore: numbered create-only batches are the only commit
 * point; checkpoints, the rolled-up events (events.jsonl or parts), the manifest follow them.
 */
export class SessionStore {
  readonly objects: ObjectStore
  readonly prefix: string
  private readonly clock: Clock
  private readonly gzip: Gzip | undefined
  private readonly cache: SnapshotCache
  private readonly upkeep: MaintenanceContext
  private readonly deferred = new DeferredAppends()
  /** Where sessions are (SessionLocator's cache): dropped with the snapshot of one found gone. */
  readonly locations = new LocationCache()

  constructor(options: SessionStoreOptions) {
    this.objects = options.store
    this.prefix = options.prefix ?? ''
    this.clock = options.clock ?? systemClock
    this.gzip = options.gzip
    this.cache = new SnapshotCache(options.cacheSize ?? 256)
    this.upkeep = {
      objects: this.objects,
      cache: this.cache,
      checkpointEvery: options.checkpointEvery ?? 16,
      historyBatches: options.checkpointHistoryBatches,
      maxRetained: options.maxRetainedEvents ?? MAX_RETAINED_EVENTS,
    }
  }

  keys(ref: SessionRef): SessionKeys {
    return new SessionKeys(this.prefix, ref)
  }

  /** `<prefix>/<tenant>/`: the tenant's folder (its `.turnline/` pointers live there). */
  tenantRoot(tenant: string): string {
    assertTenant(tenant)
    const head = this.prefix.replace(/^\/+|\/+$/g, '')
    return `${head ? `${head}/` : ''}${tenant}/`
  }

  /** `<prefix>/<tenant>/<workspace>/.vtcode/`: the workspace folder sessions and artifacts share. */
  vtcodeRoot(tenant: string, workspace: string): string {
    return workspaceSessionsPrefix(this.prefix, tenant, workspace).replace(/sessions\/$/, '')
  }

  /** Creates a session with its first batch (which must start the thread). */
  async create(
    ref: SessionRef,
    threadId: string,
    input: CommitInput & { events: [ThreadEvent, ...ThreadEvent[]] },
  ): Promise<CommitResult> {
    if (input.events[0].type !== 'thread.started') {
      throw new TurnlineError('invalid_input', 'a session starts with thread.started')
    }
    const now = new Date(this.clock.now()).toISOString()
    try {
      return await this.commit(emptySnapshot(ref, threadId, now, undefined), input)
    } catch (error) {
      if (isTurnlineError(error, 'conflict')) {
        throw new TurnlineError('conflict', `session ${ref.sessionId} already exists`)
      }
      throw error
    }
  }

  /** The session folded to its last committed batch (warm: one LIST). */
  async open(ref: SessionRef, tipHint?: number | null): Promise<SessionSnapshot> {
    const keys = this.keys(ref)
    const cached = this.cache.get(keys.root)
    // The coordinator's tip names our cached batch: nothing to probe (a writer that committed
    // after it and died before recording its tip makes our next commit lose the create-only
    // race: the cache is dropped, the retry rehydrates). Only while active: a closed session may
    // have been deleted by retention (the listing notices); a deleted one has no tip.
    if (cached?.status === 'active' && tipHint != null && tipHint === cached.lastBatch) {
      return cached
    }
    const opened = rehydrate(this.objects, keys, ref, cached ? { cached } : {})
    const snapshot = await opened.catch(this.lost(ref))
    this.cache.set(keys.root, snapshot)
    return snapshot
  }

  /**
   * Commits the next batch after `snapshot`; TurnlineError('conflict') if someone was first.
   * On a store that appends, the batch's lines are appended to events.jsonl (and the turn index
   * when it ends a turn) as soon as it has its name (append-after-name.ts), whatever `maintain`;
   * `deferAppend` (with `maintain: false`) leaves that append running (deferred-appends.ts): its
   * failure is the next commit's `maintenanceError`. `maintain: false` skips checkpoint, rollup,
   * manifest (mid-turn). `overlapManifest`: the manifest write is left running (`manifestWritten`).
   */
  async commit(
    snapshot: SessionSnapshot,
    input: CommitInput,
    options: { maintain?: boolean; overlapManifest?: boolean; deferAppend?: boolean } = {},
  ): Promise<CommitResult> {
    const keys = this.keys(snapshot.ref)
    let maintenanceError = await this.deferred.settle(keys.root)
    const now = new Date(this.clock.now()).toISOString()
    const append = new AppendAfterName(this.upkeep, keys, options.maintain !== false)
    const ahead = new CheckpointAhead(this.upkeep, keys, options.maintain !== false)
    const named = ahead.after(append.start)
    const { objects, gzip } = this
    let committed: CommittedBatch
    try {
      const encoding = { gzip, textUpTo: objects.allocationBytes }
      committed = await commitBatch(objects, keys, snapshot, input, now, named, encoding)
    } catch (error) {
      if ((await append.settled()) || isTurnlineError(error, 'conflict'))
        this.cache.delete(keys.root)
      throw error
    }
    const { batch } = committed
    this.cache.rememberBatch(keys.root, { batch, lines: committed.lines }, committed.bytes)
    const force = committed.snapshot.status === 'completed'
    const done = { batch: batch.batch, firstSeq: batch.first_seq }
    let next = committed.snapshot
    const maintain = options.maintain !== false || force
    const reset = Boolean(batch.history?.reset)
    if (options.deferAppend && !maintain) {
      this.deferred.defer(keys.root, append.start(committed))
      this.cache.set(keys.root, next)
      return { snapshot: next, ...done, ...(maintenanceError ? { maintenanceError } : {}) }
    }
    const checkpoint = ahead.start(committed)
    let file: EventsFile | undefined
    try {
      file = await append.start(committed)
    } catch (error) {
      maintenanceError ??= error
    }
    if (maintain) {
      try {
        const upkeep = this.upkeep
        const prepared = await prepareManifest(upkeep, keys, next, reset, force, file, checkpoint)
        if (!prepared.due) {
          await prepared.checkpointWritten
          next = prepared.snapshot
        } else if (options.overlapManifest && !force) {
          const pending = pendingManifestSnapshot(prepared)
          this.cache.set(keys.root, pending)
          const manifestWritten = writeManifest(this.upkeep, keys, prepared).then(
            (written) => void this.cache.replace(keys.root, pending, written),
            (error: unknown) => error,
          )
          return {
            snapshot: pending,
            ...done,
            manifestWritten,
            ...(maintenanceError ? { maintenanceError } : {}),
          }
        } else {
          next = await writeManifest(this.upkeep, keys, prepared)
        }
      } catch (error) {
        maintenanceError ??= error
        await checkpoint?.written.catch(() => undefined)
      }
    }
    this.cache.set(keys.root, next)
    return { snapshot: next, ...done, ...(maintenanceError ? { maintenanceError } : {}) }
  }

  /**
   * The manifest as of the last committed batch. The stored one lags the log of an active
   * session by design (see `manifestDue`): the batches after it are folded in, without a write.
   * A missing manifest, or a completed session's that lags, is repaired first, so callers never
   * see it regress.
   */
  async manifest(ref: SessionRef, tipHint?: number | null): Promise<SessionManifest> {
    const keys = this.keys(ref)
    const stored = await this.objects.get(keys.manifest)
    if (stored) {
      const value = parseSessionManifest(stored.body)
      const current = await manifestAsOfLog(this.objects, keys, value).catch(this.lost(ref))
      if (current.status === 'active' || value.rolled_batch === current.last_batch) return current
    }
    const snapshot = await this.open(ref, tipHint)
    await this.deferred.idle(keys.root)
    const force = snapshot.status === 'completed'
    const prepared = await prepareManifest(this.upkeep, keys, snapshot, false, force)
    const repaired = await writeManifest(this.upkeep, keys, prepared)
    this.cache.set(keys.root, repaired)
    return repaired.manifest?.value ?? manifestOf(repaired, rollupStateOf(undefined))
  }

  /** Events with seq ≥ fromSeq (at most `limit`), served during and after rollup. */
  readEvents(ref: SessionRef, fromSeq: number, limit = 1000): Promise<EventPage> {
    return readSessionEvents(this.objects, this.keys(ref), fromSeq, limit).catch(this.lost(ref))
  }

  /** The events of batches `from`..`to` (inclusive), e.g. to answer a retried turn. */
  async batchEvents(
    ref: SessionRef,
    from: number,
    to: number,
  ): Promise<{ events: ThreadEvent[]; nextSeq: number }> {
    const numbers = Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i)
    const batches = await readBatches(this.objects, this.keys(ref), numbers)
    const last = batches[batches.length - 1]
    return {
      events: batches.flatMap((batch) => batch.events.map((line) => line.event as ThreadEvent)),
      nextSeq: last ? last.first_seq + last.events.length : 0,
    }
  }

  /** The tenant's workspaces with their numbers of sessions (workspace-listing.ts). */
  workspaces(tenant: string): Promise<WorkspaceCount[]> {
    return listWorkspaces(this.objects, this.prefix, tenant)
  }

  /** Every key of a session (for tests and tooling). */
  async keysOf(ref: SessionRef): Promise<string[]> {
    return (await listAll(this.objects, this.keys(ref).root)).objects.map((o) => o.key)
  }

  /** Drops the cached snapshot of a session being erased (session/delete-session.ts). */
  forget = (ref: SessionRef) => this.cache.delete(this.keys(ref).root)

  /** A read's failure, rethrown: a session found gone is forgotten, its snapshot and location
   * (another process, or retention, deleted it); a corrupt one's snapshot is dropped. */
  private lost =
    (ref: SessionRef) =>
    (error: unknown): never => {
      if (isTurnlineError(error, 'not_found', 'corrupt_data')) this.forget(ref)
      if (isTurnlineError(error, 'not_found')) this.locations.delete(ref.tenant, ref.sessionId)
      throw error
    }

  retention(
    tenant: string,
    workspace: string,
    options: { preserve?: string[]; policy?: RetentionPolicy } = {},
  ): Promise<RetentionResult> {
    return applyRetention(
      this.objects,
      { prefix: this.prefix, tenant, workspace },
      { now: this.clock.now(), ...options },
    )
  }
}
