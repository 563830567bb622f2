import {
  DELETED_MARKER_FORMAT,
  DELETED_MARKER_VERSION,
  isDeletedMarker,
  serializeDeletedMarker,
} from '../contract/deleted-marker.ts'
import { isTurnlineError, TurnlineError } from '../contract/errors.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import type { SessionKeys } from './session-ref.ts'

const MAX_ATTEMPTS = 64

/**
 * Fences a session's log before it is deleted: a deleted-session marker, create-only, at the
 * batch number after its last batch (src/contract/deleted-marker.ts). Every writer commits batch
 * n+1 create-only, so a turn that lost its lease cannot commit there, nor after it, once the
 * marker stands. A batch that lands first moves the marker one number on. A marker already
 * there (a deletion cut short) is used again. Answers the marker's key, which the deletion keeps.
 */
export async function fenceLog(
  store: ObjectStore,
  keys: SessionKeys,
  deletedAt: string,
): Promise<string> {
  const last = await lastNumber(store, keys)
  if (last >= 0 && (await isMarker(store, keys.batch(last)))) return keys.batch(last)
  const body = new TextEncoder().encode(
    serializeDeletedMarker({
      format: DELETED_MARKER_FORMAT,
      version: DELETED_MARKER_VERSION,
      deleted_at: deletedAt,
    }),
  )
  for (let n = last + 1; n < last + 1 + MAX_ATTEMPTS; n += 1) {
    try {
      await store.put(keys.batch(n), body, { ifNoneMatch: '*', contentType: 'application/json' })
      return keys.batch(n)
    } catch (error) {
      if (!isTurnlineError(error, 'conflict')) throw error
      // Our own retried PUT, or a batch committed meanwhile: the next number then.
      if (await isMarker(store, keys.batch(n))) return keys.batch(n)
    }
  }
  throw new TurnlineError('session_busy', 'the session kept committing while it was deleted', {
    retryAfter: 1,
  })
}

/**
 * True when the session's log ends in a deleted-session marker: it was deleted (or its deletion
 * is under way). The marker outlives the deletion, so this is known after the session is gone;
 * a session pruned by retention leaves none.
 */
export async function logFenced(store: ObjectStore, keys: SessionKeys): Promise<boolean> {
  const last = await lastNumber(store, keys)
  return last >= 0 && (await isMarker(store, keys.batch(last)))
}

/** The number of the log's last object (a batch or the marker); -1 when the log is empty. */
async function lastNumber(store: ObjectStore, keys: SessionKeys): Promise<number> {
  const numbers = (await listAll(store, keys.logPrefix)).objects
    .map(({ key }) => keys.batchNumber(key))
    .filter((n): n is number => n !== undefined)
  return numbers.length > 0 ? Math.max(...numbers) : -1
}

async function isMarker(store: ObjectStore, key: string): Promise<boolean> {
  const object = await store.get(key)
  return object !== null && isDeletedMarker(object.body)
}
