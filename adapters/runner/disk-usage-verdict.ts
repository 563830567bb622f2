import type { Measurement } from './disk-usage.ts'

/** What the disk quota (disk-quota.ts) holds of one tenant's disk use. */
export interface Usage {
  bytes: number
  /** Why the usage is unknown (counted as over the quota), or undefined. */
  unknown?: string
  /** When it was measured (ms since the epoch). */
  at: number
  /** When a walk that gave no figure ended, while no walk since has given one. */
  failedAt?: number
}

/**
 * The usage after one walk of a tenant's workspaces that started at `startedAt` and ended at
 * `now`. A walk that gives no figure (too slow, or du without a total) keeps the last figure
 * once, so a single slow walk on a loaded machine does not lock a tenant out; with no figure to
 * keep, or when a walk started after that failure fails too, the usage is unknown: over the
 * quota. Otherwise a tenant could hold so many files that no walk ever ends in time, and write
 * past the quota unchecked. Walks that overlap one failure (started before it ended) count once.
 */
export function usageAfter(
  previous: Usage | undefined,
  measured: Measurement,
  startedAt: number,
  now: number,
): Usage {
  if (measured.kind === 'bytes') return { bytes: measured.bytes, at: now }
  const bytes = previous?.bytes ?? 0
  if (measured.kind === 'unreadable') return { bytes, unknown: measured.reason, at: now }
  const failedAt = previous?.failedAt ?? now
  const known = previous !== undefined && previous.unknown === undefined
  const again = previous?.failedAt !== undefined && startedAt >= previous.failedAt
  if (known && !again) return { bytes, at: now, failedAt }
  const unknown = again ? `${measured.reason}, on two walks in a row` : measured.reason
  return { bytes, unknown, at: now, failedAt }
}
