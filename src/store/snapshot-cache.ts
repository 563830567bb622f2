import type { SessionSnapshot } from './session-snapshot.ts'

/**
 * A small per-process LRU of session snapshots. Only a hint: every use re-probes the log, so a
 * stale entry costs a few extra reads, never a wrong answer.
 */
export class SnapshotCache {
  private readonly entries = new Map<string, SessionSnapshot>()

  constructor(private readonly capacity: number) {}

  get(key: string): SessionSnapshot | undefined {
    const value = this.entries.get(key)
    if (value) {
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }

  set(key: string, value: SessionSnapshot): void {
    if (this.capacity <= 0) return
    this.entries.delete(key)
    this.entries.set(key, value)
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value
      if (oldest === undefined) break
      this.entries.delete(oldest)
    }
  }

  delete(key: string): void {
    this.entries.delete(key)
  }
}
