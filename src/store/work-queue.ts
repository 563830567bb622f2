import { isTurnlineError } from '../contract/errors.ts'
import { STORE_ROOT_FOLDERS } from '../contract/store-root-folders.ts'
import {
  parseWorkRecord,
  serializeWorkRecord,
  type WorkLocation,
  type WorkRecord,
} from '../contract/work-record.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { toBytes } from './json-bytes.ts'
import { listAll } from './list-all.ts'
import { listKeys } from './list-keys.ts'
import { assertSegment, assertTenant } from './session-ref.ts'

/** A record as read, with the version a conditional rewrite needs. */
export interface StoredWork {
  record: WorkRecord
  etag: string
}

/** What recording a work item found: it is new, or the same work id was recorded before. */
export type RecordedWork = { created: true } | { created: false; existing: StoredWork | null }

const PENDING = `${STORE_ROOT_FOLDERS.deployment}/work/pending/`
const DONE = `${STORE_ROOT_FOLDERS.deployment}/work/done/`
const FAILED = `${STORE_ROOT_FOLDERS.deployment}/work/failed/`
const RECORD = /^([^/]+)\/([^/]+)\/([0-9a-f]{32})\.json$/

/**
 * The pending background work of the deployment, in the session store
 * (contract/work-record.ts): `<prefix>/.turnline/work/pending/<tenant>/<session_id>/<work_id>.json`.
 * One folder for every tenant, so a sweep lists the whole queue with one prefix.
 */
export class WorkQueue {
  private readonly root: string
  private readonly doneRoot: string
  private readonly failedRoot: string

  constructor(
    private readonly store: ObjectStore,
    prefix: string,
  ) {
    const head = prefix.replace(/^\/+|\/+$/g, '')
    this.root = `${head ? `${head}/` : ''}${PENDING}`
    this.doneRoot = `${head ? `${head}/` : ''}${DONE}`
    this.failedRoot = `${head ? `${head}/` : ''}${FAILED}`
  }

  private key(at: WorkLocation): string {
    assertTenant(at.tenant)
    assertSegment('session_id', at.session_id)
    assertSegment('work_id', at.work_id)
    return `${this.root}${at.tenant}/${at.session_id}/${at.work_id}.json`
  }

  /**
   * Writes a new record create-only. A record already there (a retry, a redelivery) is not
   * replaced: the answer carries it (null when it was deleted in between).
   */
  async record(record: WorkRecord): Promise<RecordedWork> {
    const key = this.key(record)
    try {
      await this.store.put(key, toBytes(serializeWorkRecord(record)), {
        ifNoneMatch: '*',
        contentType: 'application/json',
      })
      return { created: true }
    } catch (error) {
      if (!isTurnlineError(error, 'conflict')) throw error
      return { created: false, existing: await this.read(record) }
    }
  }

  async read(at: WorkLocation): Promise<StoredWork | null> {
    const object = await this.store.get(this.key(at))
    if (!object) return null
    return { record: parseWorkRecord(object.body), etag: object.etag }
  }

  /**
   * Rewrites a record read before (If-Match): null when it changed or went meanwhile (another
   * worker got there first), which the caller takes as someone else's outcome.
   */
  async update(stored: StoredWork, record: WorkRecord): Promise<StoredWork | null> {
    try {
      const { etag } = await this.store.put(
        this.key(record),
        toBytes(serializeWorkRecord(record)),
        { ifMatch: stored.etag, contentType: 'application/json' },
      )
      return { record, etag }
    } catch (error) {
      if (isTurnlineError(error, 'conflict', 'not_found')) return null
      throw error
    }
  }

  /**
   * A loop step's work that ran (`.turnline/work/done/…`, an empty object, create-only): a loop
   * step cannot be replayed by its key like a turn — run again, it would run the next step — so
   * a retry of its request, or a record written again after the run, finds this instead.
   */
  async markDone(at: WorkLocation, now: number): Promise<void> {
    const key = this.key(at).replace(this.root, this.doneRoot)
    // When it was written, so the retention sweep (work-retention.ts) can drop it in time.
    const marker = { format: 'turnline.work-done', version: 1, at: new Date(now).toISOString() }
    try {
      await this.store.put(key, toBytes(JSON.stringify(marker)), {
        ifNoneMatch: '*',
        contentType: 'application/json',
      })
    } catch (error) {
      if (!isTurnlineError(error, 'conflict')) throw error
    }
  }

  async isDone(at: WorkLocation): Promise<boolean> {
    return (await this.store.get(this.key(at).replace(this.root, this.doneRoot))) !== null
  }

  /**
   * Moves a record that cannot run (it carries `failed`) out of the queue, to
   * `.turnline/work/failed/…`, where its status is read: the sweep never lists it again. A retry
   * of its request records it anew (and runs it: what refused it may have passed).
   */
  async retire(record: WorkRecord): Promise<void> {
    const key = this.key(record).replace(this.root, this.failedRoot)
    await this.store.put(key, toBytes(serializeWorkRecord(record)), {
      contentType: 'application/json',
    })
    await this.remove(record)
  }

  /**
   * Moves a record that cannot be read (corrupt) out of the queue as it is, to
   * `.turnline/work/failed/…`: the sweep never wakes it again, and its status says it is corrupt.
   */
  async retireUnreadable(at: WorkLocation): Promise<void> {
    const key = this.key(at)
    const object = await this.store.get(key)
    if (!object) return
    await this.store.put(key.replace(this.root, this.failedRoot), object.body, {
      contentType: 'application/json',
    })
    await this.store.delete(key)
  }

  /**
   * Deletes every record of one session — pending, done and failed — when the session is
   * deleted; answers how many went.
   */
  async forgetSession(tenant: string, sessionId: string): Promise<number> {
    assertTenant(tenant)
    assertSegment('session_id', sessionId)
    let removed = 0
    for (const root of [this.root, this.doneRoot, this.failedRoot]) {
      for (const { key } of (await listAll(this.store, `${root}${tenant}/${sessionId}/`)).objects) {
        await this.store.delete(key)
        removed += 1
      }
    }
    return removed
  }

  async readFailed(at: WorkLocation): Promise<WorkRecord | null> {
    const object = await this.store.get(this.key(at).replace(this.root, this.failedRoot))
    return object ? parseWorkRecord(object.body) : null
  }

  async remove(at: WorkLocation): Promise<void> {
    await this.store.delete(this.key(at))
  }

  /** The records `tenant` has pending (waiting or running), `<session>/<work>.json`, as far as `upTo`. */
  listPending(tenant: string, upTo: number): Promise<string[]> {
    assertTenant(tenant)
    return listKeys(this.store, `${this.root}${tenant}/`, upTo)
  }

  /**
   * One page of the whole queue, from `after` (a location's key) on: a sweep walks it page by
   * page. Keys that are not records (nothing else is written here) are skipped.
   */
  async list(after?: string, limit = 500): Promise<{ items: WorkLocation[]; next?: string }> {
    const page = await this.store.list(this.root, {
      limit,
      ...(after === undefined ? {} : { startAfter: `${this.root}${after}` }),
    })
    const items = page.objects.flatMap((object) => {
      const at = locationOf(object.key.slice(this.root.length))
      return at ? [at] : []
    })
    const last = page.objects.at(-1)?.key
    return page.cursor && last ? { items, next: last.slice(this.root.length) } : { items }
  }
}

/** The location a queue key names (relative to the queue's folder), or undefined. */
export function locationOf(relative: string): WorkLocation | undefined {
  const match = RECORD.exec(relative)
  if (!match?.[1] || !match[2] || !match[3]) return undefined
  return { tenant: match[1], session_id: match[2], work_id: match[3] }
}

/** The queue-relative key of a location (what `list` continues after). */
export function workKeyOf(at: WorkLocation): string {
  return `${at.tenant}/${at.session_id}/${at.work_id}.json`
}
