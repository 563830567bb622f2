import { describe, expect, it } from 'vitest'
import type { Measurement } from '../../adapters/runner/disk-usage.ts'
import { type Usage, usageAfter } from '../../adapters/runner/disk-usage-verdict.ts'

const slow: Measurement = { kind: 'failed', reason: 'walking them took too long' }
const noTotal: Measurement = { kind: 'failed', reason: 'du gave no total (x)' }
const figure = (bytes: number): Measurement => ({ kind: 'bytes', bytes })

/** Walks one after another, each taking 10 ms, 1 s apart; the usage after each. */
function walks(...measured: Measurement[]): Usage[] {
  const seen: Usage[] = []
  let usage: Usage | undefined
  measured.forEach((m, i) => {
    usage = usageAfter(usage, m, i * 1000, i * 1000 + 10)
    seen.push(usage)
  })
  return seen
}

describe('the disk usage after a walk', () => {
  it('a figure is the usage, and clears an earlier failure', () => {
    const [, , after] = walks(figure(5), slow, figure(7))
    expect(after).toEqual({ bytes: 7, at: 2010 })
  })

  it('one failed walk after a figure keeps that figure: a single slow walk locks no one out', () => {
    for (const failed of [slow, noTotal]) {
      const [, kept] = walks(figure(5), failed)
      expect(kept).toEqual({ bytes: 5, at: 1010, failedAt: 1010 })
    }
  })

  it('a second failed walk in a row is unknown: over the quota', () => {
    for (const failed of [slow, noTotal]) {
      const [, , second] = walks(figure(5), failed, failed)
      expect(second?.unknown).toBe(`${failed.reason}, on two walks in a row`)
      expect(second?.bytes).toBe(5)
    }
  })

  it('stays unknown while walks keep failing, until one gives a figure', () => {
    const seen = walks(figure(5), slow, slow, slow, noTotal, figure(3))
    expect(seen.slice(2, 5).every((u) => u.unknown !== undefined)).toBe(true)
    expect(seen[5]).toEqual({ bytes: 3, at: 5010 })
  })

  it('a failed first walk, with no figure to keep, is unknown at once', () => {
    const [first] = walks(slow)
    expect(first).toMatchObject({ bytes: 0, unknown: slow.reason })
  })

  it('a failed walk after an unreadable folder stays unknown', () => {
    const unreadable: Measurement = { kind: 'unreadable', reason: 'cannot be read' }
    const [, blind, failed] = walks(figure(5), unreadable, slow)
    expect(blind).toEqual({ bytes: 5, unknown: 'cannot be read', at: 1010 })
    expect(failed?.unknown).toBe(slow.reason)
  })

  it('walks overlapping one failure (started before it ended) count as one', () => {
    const first = usageAfter({ bytes: 5, at: 0 }, slow, 100, 60_100)
    const overlapping = usageAfter(first, slow, 200, 60_200)
    expect(overlapping).toEqual({ bytes: 5, at: 60_200, failedAt: 60_100 })
    const next = usageAfter(overlapping, slow, 60_150, 120_150)
    expect(next.unknown).toBe(`${slow.reason}, on two walks in a row`)
  })
})
