import { parseStoredBatch } from '../contract/batch-encoding.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import type { SessionKeys } from './session-ref.ts'

/**
 * The Idempotency-Keys a session's batches were committed under (as the coordinator holds their
 * records), read from every batch of its log: what deleting the session must forget besides its
 * objects. A batch that cannot be read or parsed is skipped (its record expires on its own).
 */
export async function batchIdempotencyKeys(
  store: ObjectStore,
  keys: SessionKeys,
): Promise<string[]> {
  const found = new Set<string>()
  for (const { key } of (await listAll(store, keys.logPrefix)).objects) {
    const object = await store.get(key)
    if (!object) continue
    try {
      const key = (await parseStoredBatch(object.body)).idempotency_key
      if (key !== undefined) found.add(key)
    } catch {
      // unreadable: nothing to forget that we can name
    }
  }
  return [...found]
}
