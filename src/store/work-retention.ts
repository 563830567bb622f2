import { isTurnlineError } from '../contract/errors.ts'
import { STORE_ROOT_FOLDERS } from '../contract/store-root-folders.ts'
import { parseWorkRecord } from '../contract/work-record.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { fromBytes } from './json-bytes.ts'
import { listAll } from './list-all.ts'

/** How long what background work leaves behind is kept (docs/http-api.md#background-turns). */
export interface WorkRetention {
  /** A failed record (`.turnline/work/failed/`), from its failure on: its status says why. */
  failedMs: number
  /**
   * A loop step's done marker (`.turnline/work/done/`), from its writing on: it answers a retry
   * of the step's request, which the idempotency record (24 h) outlives no longer.
   */
  doneMs: number
}

const DAY = 86_400_000
export const DEFAULT_WORK_RETENTION: WorkRetention = { failedMs: 7 * DAY, doneMs: 2 * DAY }

/**
 * Deletes failed work records older than `failedMs` (by their `failed.at`) and done markers
 * older than `doneMs` (by their `at`; a marker written before markers carried a time — an empty
 * object — goes too: a loop step's record names its step, so running one again does nothing
 * either way). Unreadable objects are left for an operator. Returns how many of each went.
 */
export async function sweepWork(
  store: ObjectStore,
  options: { now: number; prefix?: string; retention?: WorkRetention },
): Promise<{ failed: number; done: number }> {
  const head = (options.prefix ?? '').replace(/^\/+|\/+$/g, '')
  const root = `${head ? `${head}/` : ''}${STORE_ROOT_FOLDERS.deployment}/work/`
  const retention = options.retention ?? DEFAULT_WORK_RETENTION
  const failed = await sweepFolder(
    store,
    `${root}failed/`,
    (body) => {
      const at = parseWorkRecord(body).failed?.at
      return at === undefined ? undefined : Date.parse(at) + retention.failedMs
    },
    options.now,
  )
  const done = await sweepFolder(
    store,
    `${root}done/`,
    (body) => {
      if (body.length === 0) return 0
      const at = (JSON.parse(fromBytes(body, 'done marker')) as { at?: unknown }).at
      return typeof at === 'string' ? Date.parse(at) + retention.doneMs : undefined
    },
    options.now,
  )
  return { failed, done }
}

/** Deletes each object whose expiry (read from its body) has passed; counts them. */
async function sweepFolder(
  store: ObjectStore,
  folder: string,
  expiresAt: (body: Uint8Array) => number | undefined,
  now: number,
): Promise<number> {
  let removed = 0
  for (const { key } of (await listAll(store, folder)).objects) {
    const object = await store.get(key)
    if (!object) continue
    let expiry: number | undefined
    try {
      expiry = expiresAt(object.body)
    } catch (error) {
      if (error instanceof SyntaxError || isTurnlineError(error)) continue
      throw error
    }
    if (expiry === undefined || !(expiry <= now)) continue
    await store.delete(key)
    removed += 1
  }
  return removed
}
