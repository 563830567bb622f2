import type { EventsFile } from './events-file-state.ts'
import type { KnownBatch, RolledCopy } from './rollup.ts'
import type { SessionSnapshot } from './session-snapshot.ts'

/** Bytes of not-yet-rolled batches kept per session before the cache gives up on them. */
const MAX_BATCH_BYTES = 8 * 1024 * 1024
/** Largest events.jsonl kept as a copy per session (a larger one is read back when due). */
const MAX_ROLLED_COPY_CHARS = 2 * 1024 * 1024

interface Entry {
  snapshot?: SessionSnapshot
  /** Batches this process committed that events.jsonl does not hold yet (saves rollup reads). */
  batches: Map<number, KnownBatch>
  batchBytes: number
  /** What this process last rolled up (saves reading events.jsonl and the index back). */
  rolled?: RolledCopy
  /** On a store that appends: what this process knows of events.jsonl (events-file.ts). */
  eventsFile?: EventsFile
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

  /** Sets `value` only while the entry still holds `expected` (nobody replaced or dropped it). */
  replace(key: string, expected: SessionSnapshot, value: SessionSnapshot): void {
    const entry = this.entries.get(key)
    if (entry?.snapshot === expected) entry.snapshot = value
  }

  delete(key: string): void {
    this.entries.delete(key)
  }

  /** A batch committed here, with its event lines and its size as written. */
  rememberBatch(key: string, known: KnownBatch, bytes: number): void {
    const entry: Entry = this.touch(key) ?? { batches: new Map(), batchBytes: 0 }
    if (entry.batchBytes + bytes > MAX_BATCH_BYTES) {
      entry.batches.clear()
      entry.batchBytes = 0
    }
    entry.batches.set(known.batch.batch, known)
    entry.batchBytes += bytes
    this.store(key, entry)
  }

  batches(key: string): ReadonlyMap<number, KnownBatch> {
    return this.entries.get(key)?.batches ?? new Map()
  }

  rolled(key: string): RolledCopy | undefined {
    return this.entries.get(key)?.rolled
  }

  /** Keeps (or, with undefined, drops) the copy of what was last rolled up. */
  rememberRolled(key: string, copy: RolledCopy | undefined): void {
    const entry = this.entries.get(key)
    if (!entry) return
    const chars = copy ? copy.lines.reduce((sum, line) => sum + line.length + 1, 0) : 0
    if (copy && chars <= MAX_ROLLED_COPY_CHARS) entry.rolled = copy
    else delete entry.rolled
  }

  eventsFile(key: string): EventsFile | undefined {
    return this.entries.get(key)?.eventsFile
  }

  /** Keeps (or, with undefined, drops) what this process knows of events.jsonl. */
  setEventsFile(key: string, file: EventsFile | undefined): void {
    const entry: Entry = this.touch(key) ?? { batches: new Map(), batchBytes: 0 }
    if (file) entry.eventsFile = file
    else delete entry.eventsFile
    this.store(key, entry)
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
