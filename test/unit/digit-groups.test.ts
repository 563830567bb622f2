import { describe, expect, it } from 'vitest'
import { groupDigits } from '../../src/shared/digit-groups.ts'

describe('groupDigits', () => {
  it('separates thousands with commas, whatever ICU data the engine has', () => {
    expect(groupDigits(0)).toBe('0')
    expect(groupDigits(999)).toBe('999')
    expect(groupDigits(1000)).toBe('1,000')
    expect(groupDigits(65_536)).toBe('65,536')
    expect(groupDigits(1_234_567)).toBe('1,234,567')
    expect(groupDigits(-1_234_567)).toBe('-1,234,567')
    expect(groupDigits(Number.MAX_SAFE_INTEGER)).toBe('9,007,199,254,740,991')
  })

  it('writes what toLocaleString("en-US") writes on an engine with full ICU data', () => {
    for (let value = 1; value < Number.MAX_SAFE_INTEGER; value = value * 7 + 3) {
      expect(groupDigits(value)).toBe(value.toLocaleString('en-US'))
    }
  })

  it('refuses what is not a safe integer', () => {
    for (const value of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) {
      expect(() => groupDigits(value)).toThrow(RangeError)
    }
  })
})
