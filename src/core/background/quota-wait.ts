import type { TurnlineError } from '../../contract/errors.ts'
import type { WorkError, WorkRecord, WorkWait } from '../../contract/work-record.ts'

/**
 * How background work refused for its tenant's daily quota waits (docs/limits.md): it stays
 * pending, tried again after a backoff that doubles from 1 s up to `retryMaxMs` — never later
 * than the quota says it resets (a quota held by calls in flight says a few seconds) — so a
 * raised limit or the day's reset lets it run soon after; it expires, failed, once it is
 * `maxAgeMs` old (from when it was accepted).
 */
export interface QuotaWaitPolicy {
  /** The longest pause between two tries (TURNLINE_WORK_QUOTA_RETRY_MS). */
  retryMaxMs: number
  /** Accepted work still refused this long after its 202 fails (TURNLINE_WORK_MAX_AGE_MS). */
  maxAgeMs: number
}

export const DEFAULT_QUOTA_WAIT: QuotaWaitPolicy = {
  retryMaxMs: 5 * 60_000,
  maxAgeMs: 48 * 3_600_000,
}

const FIRST_RETRY_MS = 1000

/** When the work stops waiting and fails (its maximum age), in ms since the epoch. */
export function expiresAt(record: WorkRecord, policy: QuotaWaitPolicy): number {
  return Date.parse(record.created_at) + policy.maxAgeMs
}

/** The record's wait after one more refusal at `now`. */
export function waitAfterRefusal(
  record: WorkRecord,
  refusal: TurnlineError,
  now: number,
  policy: QuotaWaitPolicy,
): WorkWait {
  const refusals = (record.waiting?.refusals ?? 0) + 1
  const backoff = Math.min(policy.retryMaxMs, FIRST_RETRY_MS * 2 ** Math.min(refusals - 1, 30))
  const reset = refusal.retryAfter === undefined ? backoff : refusal.retryAfter * 1000
  const retryAt = Math.min(now + Math.min(backoff, reset), expiresAt(record, policy))
  return {
    code: 'quota_exceeded',
    message: refusal.message,
    since: record.waiting?.since ?? new Date(now).toISOString(),
    retry_at: new Date(Math.max(now, retryAt)).toISOString(),
    refusals,
  }
}

/** Why work that waited for the quota up to its maximum age failed. */
export function expiredError(record: WorkRecord, now: number, policy: QuotaWaitPolicy): WorkError {
  const hours = Math.round((policy.maxAgeMs / 3_600_000) * 100) / 100
  const last = record.waiting ? `; the last refusal: ${record.waiting.message}` : ''
  return {
    code: 'quota_exceeded',
    message: `expired: the work waited for its tenant's daily quota until its maximum age of ${hours} h (TURNLINE_WORK_MAX_AGE_MS) and never ran${last}`,
    at: new Date(now).toISOString(),
  }
}
