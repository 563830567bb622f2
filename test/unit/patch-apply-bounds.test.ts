import { afterEach, describe, expect, it, vi } from 'vitest'
import { applyChunks } from '../../src/contract/patch-apply.ts'
import type { PatchChunk } from '../../src/contract/patch-parser.ts'
import { parsePatch } from '../../src/contract/patch-parser.ts'

/**
 * `apply_patch` does work linear in the file and the patch: a hunk is found with one pass over
 * the file per matching level (comparing it at every position was file × hunk lines), the file is
 * rebuilt in one pass (a splice per hunk was file × hunks, and a spread of a huge insertion threw
 * RangeError), and a patch whose loosely matching hunks would search the file again and again
 * fails with a message once it spent its step budget.
 */
const hunk = (oldLines: string[], newLines: string[]): PatchChunk => ({
  oldLines,
  newLines,
  endOfFile: false,
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('apply_patch on large inputs', () => {
  it('drops blank lines around the patch in one pass, however many there are', () => {
    // Counted as the array elements slice copies: the blank lines were dropped one slice each.
    const slice = Array.prototype.slice
    let copied = 0
    vi.spyOn(Array.prototype, 'slice').mockImplementation(function (this: unknown[], ...args) {
      copied += this.length
      return slice.apply(this, args)
    })
    const blank = 5_000
    const body = '*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch'
    const parsed = parsePatch(`${'\n'.repeat(blank)}${body}${' \n'.repeat(blank)}`)
    vi.restoreAllMocks()
    expect(parsed).toEqual({ ok: true, ops: [{ type: 'add', path: 'a.txt', contents: 'x\n' }] })
    expect(copied).toBeLessThan(10 * 2 * blank)
  })

  it('finds a long hunk in a file of repeated lines', () => {
    const file = `${'a\n'.repeat(400_000)}b\ntail\n`
    const result = applyChunks(file, [hunk([...Array<string>(20_000).fill('a'), 'b'], ['c'])])
    expect(result.ok).toBe(true)
    if (!result.ok) return
    expect(result.content).toBe(`${'a\n'.repeat(380_000)}c\ntail\n`)
  })

  it('makes a huge insertion and thousands of hunks in one pass', () => {
    const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i}`)
    const chunks = Array.from({ length: 20_000 }, (_, k) =>
      hunk([`line ${k * 5}`], [`LINE ${k * 5}`]),
    )
    chunks.push(hunk(['line 99999'], ['line 99999', ...Array<string>(300_000).fill('+')]))
    const result = applyChunks(`${lines.join('\n')}\n`, chunks)
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const out = result.content.split('\n')
    expect(out).toHaveLength(100_000 + 300_000 + 1)
    expect(out.slice(0, 6)).toEqual(['LINE 0', 'line 1', 'line 2', 'line 3', 'line 4', 'LINE 5'])
    expect(out[99_999]).toBe('line 99999')
    expect(out[100_000]).toBe('+')
  })

  it('applies an insertion and a replacement at the same line in the patch order', () => {
    const parsed = parsePatch(
      [
        '*** Begin Patch',
        '*** Update File: f',
        '@@ ctx',
        '+new',
        '@@',
        '-old',
        '*** End Patch',
      ].join('\n'),
    )
    if (!parsed.ok || parsed.ops[0]?.type !== 'update') throw new Error('unexpected parse')
    // (A splice per hunk, last first, removed the inserted line instead of `old`.)
    expect(applyChunks('ctx\nold\nend\n', parsed.ops[0].chunks)).toEqual({
      ok: true,
      content: 'ctx\nnew\nend\n',
    })
  })

  it('fails with a message when loosely matching hunks would search the file again and again', () => {
    // Every hunk matches only with trailing whitespace ignored, so the exact search of each one
    // runs to the end of the file first: hunks × file lines.
    const file = `b\n${'a\nb \n'.repeat(100_000)}`
    const few = applyChunks(
      file,
      Array.from({ length: 50 }, () => hunk(['a', 'b'], ['c'])),
    )
    expect(few.ok).toBe(true)
    const many = applyChunks(
      file,
      Array.from({ length: 5000 }, () => hunk(['a', 'b'], ['c'])),
    )
    expect(many.ok).toBe(false)
    if (many.ok) return
    expect(many.message).toMatch(/took too many steps/)
    expect(many.message).toMatch(/smaller patches/)
  })
})
