import { parseCheckpoint } from '../contract/checkpoint.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { listAll } from './list-all.ts'
import { readBatches } from './rehydrate.ts'
import type { SessionKeys } from './session-ref.ts'

/**
 * The engine state as batch `n` left it: from batch version 6 on a batch holds only what it
 * changed, so one batch alone does not tell the state. Folded from the newest checkpoint at or
 * before `n` (its state is whole) through the batches after it, read in parallel: one LIST of
 * `state/`, one checkpoint and at most the batches between two checkpoints (16, or 48 when
 * checkpoints were not written). Without a readable checkpoint, folded from batch 0.
 */
export async function stateThrough(
  store: ObjectStore,
  keys: SessionKeys,
  n: number,
): Promise<Record<string, unknown>> {
  const prefix = keys.checkpointPrefix
  const numbers = (await listAll(store, prefix)).objects
    .map((object) => /^(\d{10})\.json$/.exec(object.key.slice(prefix.length))?.[1])
    .map(Number)
    .filter((c) => Number.isInteger(c) && c <= n)
  let state: Record<string, unknown> = {}
  let from = 0
  const newest = numbers.length === 0 ? undefined : Math.max(...numbers)
  if (newest !== undefined) {
    const stored = await store.get(keys.checkpoint(newest))
    const checkpoint = stored ? readable(stored.body) : undefined
    if (checkpoint) {
      state = { ...checkpoint.state }
      from = checkpoint.batch + 1
    }
  }
  const batches = await readBatches(
    store,
    keys,
    Array.from({ length: n + 1 - from }, (_, i) => from + i),
  )
  for (const batch of batches) if (batch.state) state = { ...state, ...batch.state }
  return state
}

function readable(body: Uint8Array) {
  try {
    return parseCheckpoint(body)
  } catch {
    return undefined
  }
}
