import type { AppendOptions, AppendResult, ObjectStore } from '../ports/object-store.ts'
import type { FileShape } from './events-file-shape.ts'
import type { KnownBatch, RollupState } from './rollup.ts'

/**
 * What this process knows of a session's events.jsonl on a store that appends (events-file.ts):
 * enough to append the next batch's lines and extend the turn index without reading the file.
 */
export interface EventsFile {
  /** Bytes that hold [headSeq, through), newlines included. */
  size: number
  /** The file's version: another one means it was replaced (a cut, a repair) by someone else. */
  version: string | undefined
  /** Seq of the first line. */
  headSeq: number
  /** Seq after the last line. */
  through: number
  /** The last batch whose lines it holds (-1: none). */
  batch: number
  shape: FileShape
  /** index/turns.json as this process last wrote or read it (undefined: not known). */
  index: KnownIndex | undefined
  /**
   * Lines were appended without a sync since the file was last made durable: a manifest must
   * not vouch for them (`events_bytes`) before they are synced (`syncEventsFile`).
   */
  unsynced?: boolean
}

/**
 * index/turns.json as this process last wrote or read it: all its bytes are what
 * `serializeTurnIndex` writes for the file's entries, so the next turn's entries can be appended.
 */
export interface KnownIndex {
  /** For a put (compare-and-swap); an append gives none. */
  etag: string | undefined
  size: number
  /** For an append (`ifVersion`). */
  version: string | undefined
}

/** An ObjectStore that appends. */
export type AppendingStore = ObjectStore & {
  append(key: string, bytes: Uint8Array, options: AppendOptions): Promise<AppendResult>
}

/** The per-process cache the file's state is kept in (SnapshotCache). */
export interface EventsFileCache {
  batches(key: string): ReadonlyMap<number, KnownBatch>
  eventsFile(key: string): EventsFile | undefined
  setEventsFile(key: string, file: EventsFile | undefined): void
  forgetBatchesThrough(key: string, last: number): void
}

export interface EventsFileContext {
  objects: AppendingStore
  cache: EventsFileCache
  /** VT Code's cap on the events the file keeps. */
  maxRetained: number
}

/** The store's append capability, when it has one. */
export function appendingStore(objects: ObjectStore): AppendingStore | undefined {
  return objects.append ? (objects as AppendingStore) : undefined
}

/** Events kept when the cap cuts old turns: room for a fifth of the cap before the next cut. */
export function retainedAfterCut(maxRetained: number): number {
  return Math.max(1, maxRetained - Math.floor(maxRetained / 5))
}

/** The rollup state a manifest records for the file. */
export function fileRollup(file: EventsFile): RollupState {
  return {
    rolledThrough: file.through,
    headSeq: file.headSeq,
    rolledBatch: file.batch,
    bytes: file.size,
  }
}
