import { describe, expect, it } from 'vitest'
import { dayEndMs, utcDay } from '../../src/shared/utc-day.ts'

describe('utcDay', () => {
  it('names the UTC day of each instant, asked in any order', () => {
    const end = Date.UTC(2026, 11, 5, 24) // 2026-12-06T00:00:00Z
    expect(utcDay(end - 1)).toBe('2026-12-05')
    expect(utcDay(end - 1)).toBe('2026-12-05')
    expect(utcDay(end)).toBe('2026-12-06')
    expect(utcDay(end - 86_400_000)).toBe('2026-12-05')
    expect(utcDay(end - 86_400_001)).toBe('2026-12-04')
    expect(utcDay(end + 1)).toBe('2026-12-06')
    expect(utcDay(0)).toBe('1970-01-01')
    expect(utcDay(-1)).toBe('1969-12-31')
    expect(dayEndMs(end - 1)).toBe(end)
  })

  it('refuses an instant that is not a time, as Date does', () => {
    expect(() => utcDay(Number.NaN)).toThrow(RangeError)
  })
})
