import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { TurnlineError } from '../../src/contract/errors.ts'
import {
  parseWorkRecord,
  serializeWorkRecord,
  type WorkRecord,
} from '../../src/contract/work-record.ts'
import {
  DEFAULT_QUOTA_WAIT,
  expiredError,
  expiresAt,
  waitAfterRefusal,
} from '../../src/core/background/quota-wait.ts'

const fixture = () =>
  readFileSync(new URL('../fixtures/engine/work-record-waiting.json', import.meta.url), 'utf8')

const refusal = (retryAfter: number) =>
  new TurnlineError('quota_exceeded', 'the daily tokens quota of tenant acme is used up', {
    retryable: true,
    retryAfter,
  })

describe('a work record waiting for the quota (read-only fixture)', () => {
  it('reads a stored record and writes it back byte for byte', () => {
    const record = parseWorkRecord(fixture())
    expect(record.waiting).toMatchObject({ code: 'quota_exceeded', refusals: 9 })
    expect(serializeWorkRecord(record)).toBe(fixture().trim())
  })
})

describe('waiting for the quota', () => {
  const { waiting: _stored, ...record }: WorkRecord = parseWorkRecord(fixture())
  const created = Date.parse(record.created_at)
  const policy = { retryMaxMs: 60_000, maxAgeMs: 3_600_000 }

  it('backs off from 1 s, doubling up to the bound, counting refusals from the first', () => {
    let current: WorkRecord = record
    const delays: number[] = []
    let now = created
    for (let i = 0; i < 9; i += 1) {
      const waiting = waitAfterRefusal(current, refusal(86_000), now, policy)
      delays.push(Date.parse(waiting.retry_at) - now)
      expect(waiting).toMatchObject({ refusals: i + 1, since: new Date(created).toISOString() })
      current = { ...current, waiting }
      now = Date.parse(waiting.retry_at)
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000])
  })

  it('tries again no later than the quota resets, and never past the maximum age', () => {
    const soon = waitAfterRefusal(record, refusal(5), created, policy)
    expect(Date.parse(soon.retry_at) - created).toBe(1000)
    const later = { ...record, waiting: { ...soon, refusals: 6 } }
    expect(Date.parse(waitAfterRefusal(later, refusal(5), created, policy).retry_at)).toBe(
      created + 5000,
    )
    const old = created + policy.maxAgeMs - 10
    expect(Date.parse(waitAfterRefusal(later, refusal(86_000), old, policy).retry_at)).toBe(
      expiresAt(record, policy),
    )
  })

  it('expires at the maximum age after the 202, saying so and why it waited', () => {
    expect(expiresAt(record, DEFAULT_QUOTA_WAIT) - created).toBe(48 * 3_600_000)
    const error = expiredError(parseWorkRecord(fixture()), created + 1, policy)
    expect(error.code).toBe('quota_exceeded')
    expect(error.message).toMatch(/^expired: .* maximum age of 1 h .*; the last refusal: the daily/)
  })
})
