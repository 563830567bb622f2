import type { Batch } from '../contract/batch.ts'
import type { SessionSnapshot } from './session-snapshot.ts'

/** Bytes of not-yet-rolled batches kept per session before the cache gives up on them. */
const MAX_BATCH_BYTES = 8 * 1024 * 1024

interface Entry {
  snapshot?: SessionSnapshot
  /** Batches this process committed that events.jsonl does not hold yet (saves rollup reads). */
  batches: Map<number, Batch>
  batchBytes: number
}

/**
 * A small per-process LRU of session snapshots and recently committed batches. Only a hint:
 * every use is checked against the log (probe or create-only commit), so a stale entry costs
 * extra reads, never a wrong answer.
 */
export class SnapshotCache {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly capacity: number) {}

  get(key: string): SessionSnapshot | undefined {
    return this.touch(key)?.snapshot
  }

  set(key: string, value: SessionSnapshot): void {
    const entry: Entry = this.touch(key) ?? { batches: new Map(), batchBytes: 0 }
    entry.snapshot = value
    this.store(key, entry)
  }

  delete(key: string): void {
    this.entries.delete(key)
  }

  rememberBatch(key: string, batch: Batch): void {
    const entry: Entry = this.touch(key) ?? { batches: new Map(), batchBytes: 0 }
    const bytes = batch.events.reduce((sum, line) => sum + JSON.stringify(line).length, 0)
    if (entry.batchBytes + bytes > MAX_BATCH_BYTES) {
      entry.batches.clear()
      entry.batchBytes = 0
    }
    entry.batches.set(batch.batch, batch)
    entry.batchBytes += bytes
    this.store(key, entry)
  }

  batches(key: string): ReadonlyMap<number, Batch> {
    return this.entries.get(key)?.batches ?? new Map()
  }

  forgetBatchesThrough(key: string, last: number): void {
    const entry = this.entries.get(key)
    if (!entry) return
    for (const n of [...entry.batches.keys()]) if (n <= last) entry.batches.delete(n)
    if (entry.batches.size === 0) entry.batchBytes = 0
  }

  private touch(key: string): Entry | undefined {
    const entry = this.entries.get(key)
    if (entry) {
      this.entries.delete(key)
      this.entries.set(key, entry)
    }
    return entry
  }

  private store(key: string, entry: Entry): void {
    if (this.capacity <= 0) return
    this.entries.set(key, entry)
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value
      if (oldest === undefined) break
      this.entries.delete(oldest)
    }
  }
}
