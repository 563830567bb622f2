import { describe, expect, it } from 'vitest'
import { LastEventIdHeadersSchema } from '../../src/contract/route-params.ts'
import { foldEntryText } from '../../src/core/artifacts/loop-memory.ts'
import { tailText } from '../../src/core/orientation/artifact-summaries.ts'
import { compileToolPattern } from '../../src/core/permissions/tool-pattern.ts'
import { plainText } from '../../src/core/sandbox/exec-output-preview.ts'
import { parseVerdict } from '../../src/core/verifier/verifier-prompt.ts'
import { seededRandom } from '../support/compaction-histories.ts'

/**
 * Scans over tenant, model and command text are linear. Each of these was a regular expression
 * that backtracks on one long run (of spaces, CRs or newlines) or on many `*` in a tool pattern:
 * the inputs below took from minutes to hours. Each rewrite answers what the expression answered,
 * checked on short random texts against the expression itself.
 */
function randomText(random: () => number, alphabet: readonly string[], length: number): string {
  let text = ''
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)]
  return text
}

const MEGA = 1_000_000

describe('linear text scans', () => {
  it('tool patterns: any number of stars against any name', () => {
    const random = seededRandom(17)
    for (let i = 0; i < 3000; i++) {
      const pattern = randomText(random, ['a', 'b', '*', '_'], 1 + Math.floor(random() * 8))
      const name = randomText(random, ['a', 'b', '_'], Math.floor(random() * 10))
      const source = pattern
        .split('*')
        .map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, '\\$&'))
        .join('.*')
      const expected = pattern.includes('*') ? new RegExp(`^${source}$`, 's').test(name) : undefined
      if (expected !== undefined) expect(compileToolPattern(pattern)(name), pattern).toBe(expected)
    }
    // 30 stars: exponential for a regular expression, a few indexOf calls here.
    expect(compileToolPattern(`${'*a'.repeat(30)}*b`)('a'.repeat(64))).toBe(false)
    expect(compileToolPattern(`${'*a'.repeat(30)}*b`)(`${'a'.repeat(64)}b`)).toBe(true)
  })

  it('command output: CRs before a line break, and a long run of CRs', () => {
    const random = seededRandom(3)
    const reference = (raw: string) =>
      raw
        .replace(/\r+\n/g, '\n')
        .split('\n')
        .map((line) => {
          const at = line.lastIndexOf('\r', line.length - 2)
          return (at >= 0 ? line.slice(at + 1) : line).replace(/\r$/, '')
        })
        .join('\n')
    for (let i = 0; i < 2000; i++) {
      const raw = randomText(random, ['a', 'b', '\r', '\n', ' '], Math.floor(random() * 16))
      expect(plainText(raw), JSON.stringify(raw)).toBe(reference(raw))
    }
    expect(plainText(`${'\r'.repeat(MEGA)}x`)).toBe('x')
  })

  it('loop memory entries and artifact tails: long runs of spaces', () => {
    const random = seededRandom(5)
    const alphabet = ['a', ' ', '\t', '\n', '\r', '\u00a0']
    for (let i = 0; i < 2000; i++) {
      const text = randomText(random, alphabet, Math.floor(random() * 16))
      expect(foldEntryText(text), JSON.stringify(text)).toBe(
        text.replace(/\s*\r?\n\s*/g, ' ').trim(),
      )
    }
    expect(foldEntryText(`a${' '.repeat(MEGA)}b`)).toBe(`a${' '.repeat(MEGA)}b`)
    expect(tailText(`a${' '.repeat(MEGA)}b\n \n`, 2, 10)).toBe(
      `[… earlier output omitted]\n${' '.repeat(9)}b`,
    )
  })

  it('verifier answers: the decision, the issues section, long runs of spaces and newlines', () => {
    const verdict = parseVerdict(
      '**Decision:** reject\n\n**Issues:**\n1. the test is skipped\n- no docs\n\n  **Reasoning:** because',
    )
    expect(verdict).toEqual({
      approved: false,
      issues: ['the test is skipped', 'no docs'],
      reasoning: 'because',
    })
    expect(parseVerdict('Decision:\n  approve\nIssues: none\nReasoning: fine').approved).toBe(true)
    expect(parseVerdict(`decision${' '.repeat(MEGA)}x`).approved).toBe(false)
    const flood = parseVerdict(`Issues:${'\n'.repeat(MEGA)}- one\nReasoning: ok\nDecision: approve`)
    expect(flood.issues).toEqual(['one'])
  })

  it('Last-Event-ID: a run of spaces is refused at once', () => {
    expect(LastEventIdHeadersSchema.parse({ 'Last-Event-ID': ' 12 ' })['Last-Event-ID']).toBe(12)
    expect(LastEventIdHeadersSchema.safeParse({ 'Last-Event-ID': '1 2' }).success).toBe(false)
    const spaces = LastEventIdHeadersSchema.safeParse({ 'Last-Event-ID': `${' '.repeat(MEGA)}x` })
    expect(spaces.success).toBe(false)
  })
})
