import { describe, expect, it } from 'vitest'
import { backoffMs } from '../../src/shared/backoff.ts'

describe('backoffMs (the one backoff formula)', () => {
  it('doubles from the first step up to the cap', () => {
    const pauses = [0, 1, 2, 3, 4, 5].map((retry) =>
      backoffMs(retry, { firstMs: 100, maxMs: 1_000, jitter: 'none' }),
    )
    expect(pauses).toEqual([100, 200, 400, 800, 1_000, 1_000])
    expect(backoffMs(10, { firstMs: 200, jitter: 'none' })).toBe(204_800)
  })

  it('equal jitter picks in [step/2, step]; spread within ±25 %, rounded', () => {
    const equal = { firstMs: 500, maxMs: 8_000, jitter: 'equal' } as const
    expect(backoffMs(1, equal, () => 0)).toBe(500)
    expect(backoffMs(1, equal, () => 1)).toBe(1_000)
    expect(backoffMs(6, equal, () => 0.5)).toBe(6_000)
    const spread = { firstMs: 250, maxMs: 5_000, jitter: 'spread' } as const
    expect(backoffMs(0, spread, () => 0)).toBe(188)
    expect(backoffMs(0, spread, () => 1)).toBe(313)
    expect(backoffMs(9, spread, () => 0.5)).toBe(5_000)
  })

  it('full jitter picks a whole number of ms in [0, step)', () => {
    const full = { firstMs: 100, maxMs: 20_000, jitter: 'full' } as const
    expect(backoffMs(0, full, () => 0)).toBe(0)
    expect(backoffMs(2, full, () => 0.999)).toBe(399)
    expect(backoffMs(12, full, () => 0.5)).toBe(10_000)
  })
})
