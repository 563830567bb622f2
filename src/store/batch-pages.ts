import type { Batch } from '../contract/batch.ts'
import { TurnlineError } from '../contract/errors.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { readBatches } from './rehydrate.ts'
import type { SessionKeys } from './session-ref.ts'

/** One page of entries read from a session's batches. */
export interface BatchPage<T> {
  entries: T[]
  /** Pass back to read on; absent when the log was read to its end. */
  cursor?: string
  /**
   * The number of the last batch this page read (the cursor, or where the log ended; -1 when
   * it read none): passed back as a cursor later, it reads only batches committed since.
   */
  through: number
}

/** Batches read at once while a page fills. */
const CHUNK = 16

/**
 * A page of entries drawn from a session's batches in order (`entriesOf` each batch). The
 * batches are the record (never rewritten, kept for the session's life), so a listing reads
 * them from the cursor on, `CHUNK` at a time, until `limit` entries are found or the log ends: a
 * page costs one read per batch it passes. The cursor is the number of the last batch read.
 */
export async function readBatchPage<T>(
  objects: ObjectStore,
  keys: SessionKeys,
  lastBatch: number,
  options: { cursor?: string; limit: number },
  entriesOf: (batch: Batch) => Promise<T[]>,
): Promise<BatchPage<T>> {
  const entries: T[] = []
  let next = options.cursor === undefined ? 0 : cursorBatch(options.cursor) + 1
  while (next <= lastBatch && entries.length < options.limit) {
    const numbers = Array.from(
      { length: Math.min(CHUNK, lastBatch - next + 1) },
      (_, i) => next + i,
    )
    for (const batch of await readBatches(objects, keys, numbers)) {
      next = batch.batch + 1
      entries.push(...(await entriesOf(batch)))
      if (entries.length >= options.limit) break
    }
  }
  return { entries, ...(next <= lastBatch ? { cursor: String(next - 1) } : {}), through: next - 1 }
}

function cursorBatch(cursor: string): number {
  if (!/^(0|[1-9][0-9]{0,14})$/.test(cursor)) {
    throw new TurnlineError('invalid_input', 'cursor: not one this listing returned', {
      details: { field: 'query.cursor' },
    })
  }
  return Number(cursor)
}
