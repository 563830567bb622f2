import type { Batch } from '../contract/batch.ts'
import { readableTurnInput, type TurnInputRecord } from '../contract/turn-input-record.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { readBatchPage } from './batch-pages.ts'
import { SessionImages } from './session-images.ts'
import type { SessionKeys } from './session-ref.ts'

/** One turn as `GET /v1/sessions/{id}/turns` lists it. */
export interface TurnEntry {
  /** The turn's id (`turn-<n>`), when its batch names it. */
  turn_id?: string
  /** Seq of its `turn.started`. */
  seq: number
  /** When the batch that started it was committed. */
  started_at: string
  /** What it was asked; absent when nothing was recorded (a turn from before inputs were). */
  input?: Omit<TurnInputRecord, 'version'>
}

export interface TurnPage {
  turns: TurnEntry[]
  /** Pass back to read on; absent when the log was read to its end. */
  cursor?: string
}

/**
 * A page of a session's turns in order, each with the input its first batch recorded
 * (batch-pages.ts: a page costs one read per batch it passes).
 */
export async function readTurnInputs(
  objects: ObjectStore,
  keys: SessionKeys,
  lastBatch: number,
  options: { cursor?: string; limit: number },
): Promise<TurnPage> {
  const images = new SessionImages(objects, keys.root)
  const page = await readBatchPage(objects, keys, lastBatch, options, (batch) =>
    turnsOf(batch, images),
  )
  return { turns: page.entries, ...(page.cursor !== undefined ? { cursor: page.cursor } : {}) }
}

/**
 * The turns a batch started: its input goes with the last (the turn the batch names), its
 * stored images loaded back as `data:` URLs.
 */
async function turnsOf(batch: Batch, images: SessionImages): Promise<TurnEntry[]> {
  const starts = batch.events.flatMap((line, i) =>
    line.event.type === 'turn.started' ? [batch.first_seq + i] : [],
  )
  const readable = readableTurnInput(batch.turn_input)
  const record = readable && (await images.loadInput(readable))
  return starts.map((seq, i) => {
    const own = i === starts.length - 1
    const input = own && record ? withoutVersion(record) : undefined
    return {
      ...(own && batch.turn_id ? { turn_id: batch.turn_id } : {}),
      seq,
      started_at: batch.committed_at,
      ...(input ? { input } : {}),
    }
  })
}

function withoutVersion(record: TurnInputRecord): Omit<TurnInputRecord, 'version'> {
  const { version: _version, ...rest } = record
  return rest
}
