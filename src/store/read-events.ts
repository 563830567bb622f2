import type { Batch } from '../contract/batch.ts'
import { TurnlineError } from '../contract/errors.ts'
import { parseVersionedLine } from '../contract/serialize.ts'
import { parseSessionManifest } from '../contract/session-manifest.ts'
import type { VersionedThreadEvent } from '../contract/thread-event.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { readPartLines } from './event-parts.ts'
import { fromBytes } from './json-bytes.ts'
import { rollupStateOf } from './manifest-sync.ts'
import { probeLastBatch, readBatches } from './rehydrate.ts'
import type { RollupState } from './rollup.ts'
import type { SessionKeys } from './session-ref.ts'

export interface SequencedEvent {
  seq: number
  line: VersionedThreadEvent
  /** The canonical line as stored, when it was read from events.jsonl (feeds splice its text). */
  text?: string
}

export interface EventPage {
  events: SequencedEvent[]
  /** Seq to ask for next (= one past the last returned event). */
  nextSeq: number
  /** True when the page reaches the last committed event. */
  complete: boolean
}

/**
 * A session's events with seq ≥ `fromSeq` (at most `limit`): where its log ends, from the
 * manifest and a listing, then `readEvents`. not_found when the session is gone.
 */
export async function readSessionEvents(
  store: ObjectStore,
  keys: SessionKeys,
  fromSeq: number,
  limit: number,
): Promise<EventPage> {
  const stored = await store.get(keys.manifest)
  const manifest = stored ? parseSessionManifest(stored.body) : undefined
  const lastBatch = await probeLastBatch(store, keys, manifest?.last_batch ?? -1)
  if (lastBatch < 0) throw new TurnlineError('not_found', `session ${keys.sessionId} not found`)
  let nextSeq = (manifest?.last_seq ?? -1) + 1
  if (!manifest || lastBatch > manifest.last_batch) {
    const [last] = await readBatches(store, keys, [lastBatch])
    nextSeq = last ? last.first_seq + last.events.length : nextSeq
  }
  const view = { lastBatch, nextSeq, rollup: rollupStateOf(manifest) }
  return readEvents(store, keys, view, fromSeq, limit)
}

/** Batches fetched at once while paging through the log. */
const READ_AHEAD = 8

/**
 * Events with seq ≥ `fromSeq`, at most `limit`, from the rolled events when they cover
 * `fromSeq` — the parts that hold the page (event-parts.ts), or events.jsonl when it is the
 * version the manifest describes — otherwise from the batches (which always hold every event). Works during and after rollup: a half-finished rollup only makes
 * the read fall back to batches.
 */
export async function readEvents(
  store: ObjectStore,
  keys: SessionKeys,
  view: { lastBatch: number; nextSeq: number; rollup: RollupState },
  fromSeq: number,
  limit: number,
): Promise<EventPage> {
  const start = Math.max(0, fromSeq)
  const events: SequencedEvent[] = []
  let nextBatch = view.rollup.rolledBatch + 1
  const wanted = () => {
    const last = events[events.length - 1]
    return last ? last.seq + 1 : start
  }

  const { rollup } = view
  const inRolled = start < rollup.rolledThrough && start >= rollup.headSeq
  if (inRolled && rollup.parts) {
    // Only the parts that hold the page are read.
    const lines = await readPartLines(store, keys, rollup.parts, start, limit)
    if (lines) {
      lines.forEach((text, i) => {
        events.push({ seq: start + i, line: parseVersionedLine(text), text })
      })
      if (events.length >= limit) return page(wanted(), view)
    } else {
      nextBatch = await batchHolding(store, keys, start, view.lastBatch)
    }
  } else if (inRolled && rollup.etag !== undefined) {
    const file = await store.get(keys.events)
    if (file && file.etag === rollup.etag) {
      const lines = fromBytes(file.body, 'events.jsonl').split('\n')
      for (let i = start - rollup.headSeq; i < lines.length && events.length < limit; i++) {
        const text = lines[i]
        if (!text) continue
        events.push({ seq: rollup.headSeq + i, line: parseVersionedLine(text), text })
      }
      if (events.length >= limit) return page(wanted(), view)
    } else {
      nextBatch = await batchHolding(store, keys, start, view.lastBatch)
    }
  } else if (start < rollup.rolledThrough) {
    nextBatch = await batchHolding(store, keys, start, view.lastBatch)
  }

  while (nextBatch <= view.lastBatch && events.length < limit) {
    const count = Math.min(READ_AHEAD, view.lastBatch - nextBatch + 1)
    const batches = await readBatches(
      store,
      keys,
      Array.from({ length: count }, (_, i) => nextBatch + i),
    )
    for (const batch of batches) {
      batch.events.forEach((line, i) => {
        const at = batch.first_seq + i
        if (at >= wanted() && events.length < limit) events.push({ seq: at, line })
      })
    }
    nextBatch += count
  }
  return page(wanted(), view)

  function page(nextSeq: number, v: { nextSeq: number }): EventPage {
    return { events, nextSeq, complete: nextSeq >= v.nextSeq }
  }
}

/** Binary search for the batch whose events include `seq` (batches are dense and ordered). */
async function batchHolding(
  store: ObjectStore,
  keys: SessionKeys,
  seq: number,
  lastBatch: number,
): Promise<number> {
  let lo = 0
  let hi = lastBatch
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    const [batch] = (await readBatches(store, keys, [mid])) as [Batch]
    if (batch.first_seq <= seq) lo = mid
    else hi = mid - 1
  }
  return lo
}
