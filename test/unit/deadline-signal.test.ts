import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { deadlineSignal } from '../../src/shared/deadline-signal.ts'

describe('deadlineSignal', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  it('aborts with a TimeoutError when the time is up, not before', () => {
    const { signal, clear } = deadlineSignal(5_000)
    vi.advanceTimersByTime(4_999)
    expect(signal.aborted).toBe(false)
    vi.advanceTimersByTime(1)
    expect(signal.aborted).toBe(true)
    expect((signal.reason as Error).name).toBe('TimeoutError')
    clear()
  })

  it("aborts with the outer signal's reason when that aborts first", () => {
    const outer = new AbortController()
    const { signal, clear } = deadlineSignal(60_000, outer.signal)
    const reason = new Error('cancelled')
    outer.abort(reason)
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe(reason)
    clear()
  })

  it('starts aborted when the outer signal already is', () => {
    const outer = new AbortController()
    outer.abort('gone')
    const { signal } = deadlineSignal(60_000, outer.signal)
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe('gone')
    expect(vi.getTimerCount()).toBe(0)
  })

  it('never aborts once cleared, by the timer or by the outer signal, and leaves no timer', () => {
    const outer = new AbortController()
    const { signal, clear } = deadlineSignal(5_000, outer.signal)
    clear()
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(10_000)
    outer.abort('late')
    expect(signal.aborted).toBe(false)
  })
})
