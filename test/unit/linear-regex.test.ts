import { describe, expect, it } from 'vitest'
import { LinearRegexError, linearRegex } from '../../src/shared/linear-regex.ts'

/** What JavaScript's engine finds: the match's start and end. */
function expected(pattern: string, subject: string, flags = '') {
  const match = new RegExp(pattern, flags).exec(subject)
  return match ? { index: match.index, end: match.index + match[0].length } : undefined
}

const cases: [string, string[], string?][] = [
  ['a+b', ['xxaaab', 'b', 'aaa']],
  ['^foo', ['foo bar', 'a foo']],
  ['bar$', ['foo bar', 'bar foo']],
  ['(a|ab)(c|bcd)(d*)', ['abcd', 'xabcdd']],
  ['x{2,3}', ['x', 'xx', 'xxxxx']],
  ['x{2}', ['xxx']],
  ['x{2,}', ['xxxxxxx y']],
  ['[a-c]+', ['zzcabz']],
  ['[^0-9 ]+', ['12 ab3']],
  ['\\d{3}-\\d{4}', ['call 555-1234 now']],
  ['\\bword\\b', ['swordfish word', 'words']],
  ['\\Bor\\B', ['word or']],
  ['colou?r', ['color colour']],
  ['(?:ab)+', ['abababx']],
  ['(?<n>x)y', ['axy']],
  ['a.c', ['abc a\tc']],
  ['a*?b', ['aaab']],
  ['a+?', ['aaa']],
  ['<.*>', ['<a><b>']],
  ['<.*?>', ['<a><b>']],
  ['\\x41\\u00e9', ['xAé']],
  ['[\\w.-]+@[\\w-]+\\.\\w+', ['mail me at some.one@example.com today']],
  ['\\s+\\S', ['a   b']],
  ['a|b|c', ['zzc']],
  ['(a*)*b', ['aaab', 'aaa']],
  ['x{0}y', ['xy']],
  ['[]a', ['a']],
  ['a{', ['a{']],
  ['[-a]+', ['--a-']],
  ['café', ['CAFÉ'], 'i'],
  ['[a-z]+', ['ABC def'], 'i'],
  ['Error', ['an error'], 'i'],
]

describe('linearRegex', () => {
  it('finds what JavaScript’s engine finds', () => {
    for (const [pattern, subjects, flags] of cases) {
      const regex = linearRegex(pattern, { ignoreCase: flags === 'i' })
      for (const subject of subjects) {
        expect(regex.exec(subject), `/${pattern}/${flags ?? ''} on ${subject}`).toEqual(
          expected(pattern, subject, flags),
        )
      }
    }
  })

  it('refuses back-references, lookarounds and broken patterns with a message', () => {
    for (const [pattern, message] of [
      ['(a)\\1', 'back-references are not supported'],
      ['(?<n>a)\\k<n>', 'back-references are not supported'],
      ['(?=a)', 'lookarounds are not supported'],
      ['(?<!a)b', 'lookarounds are not supported'],
      ['a**', 'nothing to repeat'],
      ['*a', 'nothing to repeat'],
      ['(ab', "missing ')'"],
      ['ab)', "unmatched ')'"],
      ['[ab', "missing ']'"],
      ['x{5,2}', 'numbers out of order'],
      ['a{1001}', 'a count above 1000'],
      ['[z-a]', 'range out of order'],
      ['\\q', 'an unknown escape'],
      ['(a{1000}){1000}', 'the pattern is too large'],
    ] as const) {
      expect(() => linearRegex(pattern), pattern).toThrow(LinearRegexError)
      expect(() => linearRegex(pattern), pattern).toThrow(message)
    }
  })

  it('matches patterns that make a backtracking engine stall, in time linear in the line', () => {
    // Each of these takes JavaScript's engine exponential time on such a subject (without V8's
    // linear-time fallback); here each is a pass over the line per step of the pattern.
    const line = `${'a'.repeat(100_000)}!`
    expect(linearRegex('(a+)+$').exec(line)).toBeUndefined()
    expect(linearRegex('(a|a)*b').exec(line)).toBeUndefined()
    expect(linearRegex('(a|aa)+$').exec(line)).toBeUndefined()
    expect(linearRegex('^(a+)+!').exec(line)).toEqual({ index: 0, end: line.length })
    expect(linearRegex('(\\w+\\s?)+$').exec(`${'word '.repeat(20_000)}!`)).toBeUndefined()
  })

  it('spends at most a bounded number of steps a character, one budget for many subjects', () => {
    const line = 'a'.repeat(10_000)
    // ~2,000 steps at every position of such a line: refused before it takes seconds.
    const wide = linearRegex('.{0,1000}x')
    expect(() => wide.exec(line)).toThrow(LinearRegexError)
    expect(() => wide.exec(line)).toThrow('needs more than 32 steps a character')
    expect(wide.exec('abx')).toEqual({ index: 0, end: 3 })
    // Many short subjects draw on one budget: each alone fits, all of them do not.
    const budget = wide.budget()
    expect(() => {
      for (let i = 0; i < 1000; i++) wide.exec('a'.repeat(1000), budget)
    }).toThrow(LinearRegexError)
    const plain = linearRegex('(?:foo|bar)\\s*=\\s*\\d+')
    const shared = plain.budget()
    for (let i = 0; i < 1000; i++)
      expect(plain.exec(`${'a'.repeat(1000)} foo = 1`, shared)).toBeDefined()
  })
})
