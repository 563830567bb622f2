import { isTurnlineError } from '../contract/errors.ts'
import type { ObjectStore } from '../ports/object-store.ts'

/**
 * Writes create-only where whoever writes a key writes the same bytes (a content-addressed
 * object, a record named by what it records): an object already there is fine. True when this
 * write made it.
 */
export async function putOnce(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  contentType?: string,
): Promise<boolean> {
  try {
    await store.put(key, body, { ifNoneMatch: '*', ...(contentType ? { contentType } : {}) })
    return true
  } catch (error) {
    if (!isTurnlineError(error, 'conflict')) throw error
    return false
  }
}
