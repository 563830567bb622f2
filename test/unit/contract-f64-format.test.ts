import { describe, expect, it } from 'vitest'
import { formatF64 } from '../../src/shared/f64-format.ts'

describe('formatF64 (serde_json / ryu spelling of an f64)', () => {
  it.each([
    [0, '0.0'],
    [-0, '-0.0'],
    [1, '1.0'],
    [2, '2.0'],
    [100, '100.0'],
    [1.25, '1.25'],
    [-3.75, '-3.75'],
    [0.1, '0.1'],
    [0.30000000000000004, '0.30000000000000004'],
    [1234.5678, '1234.5678'],
    [0.0001, '0.0001'],
    [0.00001, '0.00001'],
    [0.000001, '1e-6'],
    [0.0000025, '2.5e-6'],
    [1e-7, '1e-7'],
    [1e15, '1000000000000000.0'],
    [1e16, '1e16'],
    [1.5e16, '1.5e16'],
    [123456789012345680000, '1.2345678901234568e20'],
    [1e21, '1e21'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e308'],
  ])('%s → %s', (value, expected) => {
    expect(formatF64(value)).toBe(expected)
  })

  it('round-trips through JSON.parse', () => {
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: a short decimal, not Math.E
    for (const value of [0.1, 2.5e-6, 1e16, 12.0, 2.718, 9007199254740992]) {
      expect(JSON.parse(formatF64(value))).toBe(value)
    }
  })

  it('refuses non-finite numbers', () => {
    expect(() => formatF64(Number.NaN)).toThrow(RangeError)
    expect(() => formatF64(Number.POSITIVE_INFINITY)).toThrow(RangeError)
  })
})
