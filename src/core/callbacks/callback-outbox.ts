import {
  CALLBACK_EVENT_TYPES,
  type CallbackBatch,
  type CallbackDelivery,
  parseCallbackBatch,
  parseCallbackDelivery,
  serializeCallbackBatch,
  serializeCallbackDelivery,
} from '../../contract/callback-delivery.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import { LOOP_ID } from '../../contract/loop-state.ts'
import type { ObjectStore } from '../../ports/object-store.ts'
import { listAll } from '../../store/list-all.ts'
import { putOnce } from '../../store/put-once.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionStore } from '../../store/session-store.ts'
import { callbackMessageId, type NoticeDraft, workMessageId } from './callback-notices.ts'

const pad = (n: number) => String(n).padStart(10, '0')
const bytes = (text: string) => new TextEncoder().encode(text)
const MARKER_KEY = /^([^/]+)\/([^/]+)\/([^/]+)\/(?:(\d{10})|work-([0-9a-f]{32}))\.json$/
/** A loop's own markers sit under `.loop.<loop_id>`: never a session id (none starts with "."). */
const LOOP_FOLDER = '.loop.'

/**
 * A loop's own outbox, for the `loop.stopped` of a run that stopped before any step had a
 * session (paused before its first step, a fault before the step's session was created).
 */
export interface LoopOwner {
  tenant: string
  workspace: string
  loopId: string
}

const isLoopOwner = (owner: SessionRef | LoopOwner): owner is LoopOwner => 'loopId' in owner

/** A marker found by the sweep: of a committed batch, or of one work's `work.failed` notice. */
export interface MarkerEntry {
  key: string
  ref: SessionRef
  batch: number
  /** A keyed marker (`work-<key>.json`): its deliveries are that key's, not a batch's. */
  work?: string
  /** A loop's own keyed marker (`.loop.<loop_id>/work-<key>.json`): `ref` names no session. */
  loop?: LoopOwner
}

/**
 * A notice keyed by what it reports rather than by a batch: `work.failed` by its work id,
 * `loop.stopped` by its run (32 hex digits of SHA-256 over loop and run); `batch` is the
 * session's last batch when it was recorded (for ordering).
 */
export interface KeyedNotice {
  key: string
  /** The work a `work.failed` reports (its records carry it). */
  workId?: string
  batch: number
  draft: NoticeDraft
}

/** A delivery record as stored, with the version to replace it by compare-and-swap. */
export interface StoredDelivery {
  key: string
  record: CallbackDelivery
  etag: string
}

/** Create-only: an existing object (ours or another writer's, same content by key) is fine. */
async function createOnce(objects: ObjectStore, key: string, body: string): Promise<void> {
  await putOnce(objects, key, bytes(body), 'application/json')
}

function markerOf(ref: SessionRef, batch: number, url: string, at: string): CallbackBatch {
  return {
    format: 'turnline.callback_batch',
    version: 1,
    tenant: ref.tenant,
    workspace: ref.workspace,
    session_id: ref.sessionId,
    batch,
    url,
    created_at: at,
  }
}

/** A notice not yet attempted: due at once. */
function pendingDelivery(
  id: string,
  draft: NoticeDraft,
  batch: number,
  url: string,
  at: string,
): CallbackDelivery {
  return {
    format: 'turnline.callback_delivery',
    version: 1,
    id,
    type: draft.type,
    batch,
    url,
    body: JSON.stringify(draft.notice),
    state: 'pending',
    created_at: at,
    next_attempt_at: at,
    attempts: [],
  }
}

/**
 * The callbacks' durable outbox in the object store: batch markers at the deployment's root
 * (`.turnline/callbacks/<tenant>/<workspace>/<session>/<batch>.json`, what the sweep lists) and
 * delivery records in each session's folder (`callbacks/<batch>-<type>.json`, what
 * `GET …/deliveries` lists, deleted with the session); a `work.failed` notice has its own
 * marker and record keyed by its work id (`work-<work_id>.json`, `callbacks/work-<work_id>-…`).
 */
export class CallbackOutbox {
  readonly objects: ObjectStore
  private readonly markersRoot: string

  constructor(private readonly sessions: SessionStore) {
    this.objects = sessions.objects
    const head = sessions.prefix.replace(/^\/+|\/+$/g, '')
    this.markersRoot = `${head ? `${head}/` : ''}.turnline/callbacks/`
  }

  markerKey(ref: SessionRef, batch: number): string {
    this.sessions.keys(ref)
    return `${this.markersRoot}${ref.tenant}/${ref.workspace}/${ref.sessionId}/${pad(batch)}.json`
  }

  /** The marker of one keyed notice (the same key whoever records it). */
  keyedMarkerKey(ref: SessionRef, key: string): string {
    return this.markerKey(ref, 0).replace(/[^/]+$/, `work-${key}.json`)
  }

  private recordsPrefix(ref: SessionRef, batch?: number | { work: string }): string {
    const root = `${this.sessions.keys(ref).root}callbacks/`
    if (batch === undefined) return root
    return typeof batch === 'number' ? `${root}${pad(batch)}-` : `${root}work-${batch.work}-`
  }

  /** Before the commit of `batch`: the marker the sweep recovers from (create-only). */
  mark(ref: SessionRef, batch: number, url: string, now: number): Promise<void> {
    const marker = markerOf(ref, batch, url, new Date(now).toISOString())
    return createOnce(this.objects, this.markerKey(ref, batch), serializeCallbackBatch(marker))
  }

  /**
   * A keyed notice (before the state that says it happened is saved: a retired work record, a
   * stopped run), marker then delivery, both create-only under its key — recorded again after a
   * crash, they are the same objects, with the same `webhook-id`.
   */
  async recordKeyed(owner: SessionRef | LoopOwner, notice: KeyedNotice, url: string, now: number) {
    const at = new Date(now).toISOString()
    const place = this.keyedPlace(owner, notice.key)
    const work = notice.workId === undefined ? {} : { work_id: notice.workId }
    const marker = { ...markerOf(place.ref, notice.batch, url, at), ...work }
    await createOnce(this.objects, place.markerKey, serializeCallbackBatch(marker))
    const { type } = notice.draft
    const id = await workMessageId(owner.tenant, place.ref.sessionId, notice.key, type)
    const record = { ...pendingDelivery(id, notice.draft, notice.batch, url, at), ...work }
    const recordKey = `${place.records}${type}.json`
    await createOnce(this.objects, recordKey, serializeCallbackDelivery(record))
  }

  /** Where a keyed notice's marker and records are: a session's, or a loop's own. */
  private keyedPlace(owner: SessionRef | LoopOwner, key: string) {
    if (!isLoopOwner(owner)) {
      const records = this.recordsPrefix(owner, { work: key })
      return { ref: owner, markerKey: this.keyedMarkerKey(owner, key), records }
    }
    const records = `${this.loopRecords(owner)}work-${key}-`
    const ref = { ...owner, sessionId: `${LOOP_FOLDER}${owner.loopId}` }
    const markerKey = `${this.markersRoot}${owner.tenant}/${owner.workspace}/${ref.sessionId}/work-${key}.json`
    return { ref, markerKey, records }
  }

  /** `<workspace>/.vtcode/state/loop-<id>/callbacks/`: deleted with the loop's workspace. */
  private loopRecords(loop: LoopOwner): string {
    if (!LOOP_ID.test(loop.loopId)) throw new Error(`not a loop id: ${loop.loopId.slice(0, 80)}`)
    return `${this.sessions.vtcodeRoot(loop.tenant, loop.workspace)}state/loop-${loop.loopId}/callbacks/`
  }

  /** After the commit: one pending delivery per notice (create-only, keyed by batch and type). */
  async record(
    ref: SessionRef,
    batch: number,
    drafts: readonly NoticeDraft[],
    url: string,
    now: number,
  ): Promise<void> {
    const at = new Date(now).toISOString()
    await Promise.all(
      drafts.map(async (draft) => {
        const id = await callbackMessageId(ref.tenant, ref.sessionId, batch, draft.type)
        const record = pendingDelivery(id, draft, batch, url, at)
        const key = `${this.recordsPrefix(ref, batch)}${draft.type}.json`
        await createOnce(this.objects, key, serializeCallbackDelivery(record))
      }),
    )
  }

  /**
   * The deliveries of one batch, of one work (`{work}`), or of the whole session, in the order
   * of their events.
   */
  deliveries(ref: SessionRef, batch?: number | { work: string }): Promise<StoredDelivery[]> {
    return this.listRecords(this.recordsPrefix(ref, batch))
  }

  /** A loop's own deliveries (of one key, or all of them). */
  loopDeliveries(loop: LoopOwner, key?: string): Promise<StoredDelivery[]> {
    return this.listRecords(`${this.loopRecords(loop)}${key === undefined ? '' : `work-${key}-`}`)
  }

  /** The deliveries of a keyed marker: its session's or its loop's. */
  keyedDeliveries(entry: MarkerEntry, key: string): Promise<StoredDelivery[]> {
    return entry.loop
      ? this.loopDeliveries(entry.loop, key)
      : this.deliveries(entry.ref, { work: key })
  }

  private async listRecords(prefix: string): Promise<StoredDelivery[]> {
    const page = await listAll(this.objects, prefix)
    const found = await Promise.all(
      page.objects.map(async ({ key }) => {
        const object = await this.objects.get(key)
        return object
          ? { key, record: parseCallbackDelivery(object.body), etag: object.etag }
          : null
      }),
    )
    return found
      .filter((d): d is StoredDelivery => d !== null)
      .sort(
        (a, b) =>
          a.record.batch - b.record.batch ||
          CALLBACK_EVENT_TYPES.indexOf(a.record.type) - CALLBACK_EVENT_TYPES.indexOf(b.record.type),
      )
  }

  async read(key: string): Promise<StoredDelivery | null> {
    const object = await this.objects.get(key)
    return object ? { key, record: parseCallbackDelivery(object.body), etag: object.etag } : null
  }

  /** Replaces a record if it is still the version read; false when someone changed it since. */
  async replace(key: string, record: CallbackDelivery, etag: string): Promise<string | false> {
    try {
      const put = await this.objects.put(key, bytes(serializeCallbackDelivery(record)), {
        ifMatch: etag,
        contentType: 'application/json',
      })
      return put.etag
    } catch (error) {
      if (isTurnlineError(error, 'conflict') || isTurnlineError(error, 'not_found')) return false
      throw error
    }
  }

  /** Every batch marker, oldest key first (a name that is not one is skipped). */
  async markers(): Promise<MarkerEntry[]> {
    const page = await listAll(this.objects, this.markersRoot)
    return page.objects.flatMap(({ key }) => {
      const match = MARKER_KEY.exec(key.slice(this.markersRoot.length))
      if (!match) return []
      const [, tenant = '', workspace = '', sessionId = '', batch = '0', work] = match
      const ref = { tenant, workspace, sessionId }
      if (sessionId.startsWith(LOOP_FOLDER)) {
        const loopId = sessionId.slice(LOOP_FOLDER.length)
        if (!work || !LOOP_ID.test(loopId)) return []
        return [{ key, ref, batch: Number(batch), work, loop: { tenant, workspace, loopId } }]
      }
      return [{ key, ref, batch: Number(batch), ...(work ? { work } : {}) }]
    })
  }

  async readMarker(key: string): Promise<CallbackBatch | null> {
    const object = await this.objects.get(key)
    return object ? parseCallbackBatch(object.body) : null
  }

  dropMarker(key: string): Promise<void> {
    return this.objects.delete(key)
  }

  /** Drops every batch marker of a session being deleted (its records go with its folder). */
  async dropSession(ref: SessionRef): Promise<void> {
    const folder = this.markerKey(ref, 0).replace(/[^/]+$/, '')
    for (const { key } of (await listAll(this.objects, folder)).objects) await this.dropMarker(key)
  }
}
