import { describe, expect, it } from 'vitest'
import { newSessionId } from '../../src/core/session/create-session.ts'
import { randomIds } from '../../src/shared/random-ids.ts'

describe('session ids', () => {
  it('keep the VT Code-like shape: session-<UTC second>-<16 hex-safe characters>', () => {
    const id = newSessionId(Date.UTC(2026, 11, 5, 3, 18, 51, 7), randomIds.token())
    expect(id).toMatch(/^session-20261205T031851Z-007[0-9a-f]{13}$/)
  })

  it('sort by creation time to the millisecond, whatever their random part', () => {
    const second = Date.UTC(2026, 11, 5, 3, 18, 51)
    const ids = [999, 0, 480, 9, 100, 10].map((ms) =>
      newSessionId(second + ms, ms % 2 ? 'f'.repeat(32) : '0'.repeat(32)),
    )
    const byTime = [0, 9, 10, 100, 480, 999].map((ms) => ids[[999, 0, 480, 9, 100, 10].indexOf(ms)])
    expect([...ids].sort()).toEqual(byTime)
    // the next second sorts after every millisecond of this one
    expect(newSessionId(second + 1000, 'f'.repeat(32)) > (byTime.at(-1) ?? '')).toBe(true)
  })
})
