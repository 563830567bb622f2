/**
 * The parser of `linear-regex.ts`: JavaScript's regular-expression syntax without what needs
 * backtracking, read into a tree of character tests, sequences, alternatives, repeats and
 * assertions. Back-references and lookarounds are refused with a `LinearRegexError`.
 */

export class LinearRegexError extends Error {
  override readonly name = 'LinearRegexError'
}

export type Test = (code: number) => boolean
export type AssertKind = 'bol' | 'eol' | 'word' | 'nonword'
export type Node =
  | { t: 'char'; test: Test }
  | { t: 'seq'; items: Node[] }
  | { t: 'alt'; items: Node[] }
  | { t: 'repeat'; node: Node; min: number; max: number; greedy: boolean }
  | { t: 'assert'; kind: AssertKind }

/** The most a bounded repeat may count. */
const MAX_COUNT = 1000

const isDigit: Test = (c) => c >= 48 && c <= 57
export const isWord: Test = (c) =>
  isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
const isSpace: Test = (c) => /\s/.test(String.fromCharCode(c))
const not =
  (test: Test): Test =>
  (c) =>
    !test(c)

/** Reads `source` into a tree (`parse`). */
export class Parser {
  private at = 0

  constructor(
    private readonly source: string,
    private readonly ignoreCase: boolean,
  ) {}

  parse(): Node {
    const node = this.alternation()
    if (this.at < this.source.length) this.fail(`unmatched ')'`)
    return node
  }

  private fail(message: string): never {
    throw new LinearRegexError(`${message} at ${this.at} in /${this.source.slice(0, 200)}/`)
  }

  private peek(): string | undefined {
    return this.source[this.at]
  }

  private alternation(): Node {
    const items = [this.sequence()]
    while (this.peek() === '|') {
      this.at++
      items.push(this.sequence())
    }
    return items.length === 1 ? (items[0] as Node) : { t: 'alt', items }
  }

  private sequence(): Node {
    const items: Node[] = []
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      items.push(this.quantified(this.atom()))
    }
    return { t: 'seq', items }
  }

  private quantified(node: Node): Node {
    const bounds = this.quantifier()
    if (!bounds) return node
    if (node.t === 'assert') this.fail('nothing to repeat')
    const greedy = this.peek() !== '?'
    if (!greedy) this.at++
    if (this.quantifier()) this.fail('nothing to repeat')
    return { t: 'repeat', node, greedy, ...bounds }
  }

  private quantifier(): { min: number; max: number } | undefined {
    const c = this.peek()
    if (c === '*' || c === '+' || c === '?') {
      this.at++
      return { min: c === '+' ? 1 : 0, max: c === '?' ? 1 : Number.POSITIVE_INFINITY }
    }
    if (c !== '{') return undefined
    const braces = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at))
    if (!braces) return undefined // a literal '{', as JavaScript reads it
    this.at += braces[0].length
    const min = Number(braces[1])
    const max =
      braces[2] === undefined ? min : braces[3] ? Number(braces[3]) : Number.POSITIVE_INFINITY
    if (min > MAX_COUNT || (max !== Number.POSITIVE_INFINITY && max > MAX_COUNT)) {
      this.fail(`a count above ${MAX_COUNT}`)
    }
    if (max < min) this.fail('numbers out of order in {} quantifier')
    return { min, max }
  }

  private atom(): Node {
    const c = this.source[this.at++] as string
    switch (c) {
      case '(':
        return this.group()
      case '[':
        return this.char(this.charClass())
      case '.':
        return this.char((code) => code !== 10 && code !== 13)
      case '^':
        return { t: 'assert', kind: 'bol' }
      case '$':
        return { t: 'assert', kind: 'eol' }
      case '\\':
        return this.escape()
      case '*':
      case '+':
      case '?':
        return this.fail('nothing to repeat')
      default:
        return this.char(this.literal(c.charCodeAt(0)))
    }
  }

  private group(): Node {
    if (this.source.startsWith('?:', this.at)) this.at += 2
    else if (/^\?<[A-Za-z_$][\w$]*>/.test(this.source.slice(this.at))) {
      this.at = this.source.indexOf('>', this.at) + 1
    } else if (this.peek() === '?') this.fail('lookarounds are not supported')
    const node = this.alternation()
    if (this.peek() !== ')') this.fail(`missing ')'`)
    this.at++
    return node
  }

  private escape(): Node {
    const c = this.source[this.at]
    if (c === 'b' || c === 'B') {
      this.at++
      return { t: 'assert', kind: c === 'b' ? 'word' : 'nonword' }
    }
    return this.char(this.escapedTest())
  }

  /** The test of the escape after a backslash (outside or inside a class). */
  private escapedTest(): Test {
    const c = this.source[this.at++]
    if (c === undefined) this.fail('\\ at the end of the pattern')
    const shorthand: Record<string, Test> = {
      d: isDigit,
      D: not(isDigit),
      w: isWord,
      W: not(isWord),
      s: isSpace,
      S: not(isSpace),
    }
    const known = shorthand[c]
    if (known) return known
    if (/[1-9]/.test(c) || c === 'k') this.fail('back-references are not supported')
    return this.literal(this.escapedCode(c))
  }

  private escapedCode(c: string): number {
    const controls: Record<string, number> = { n: 10, r: 13, t: 9, f: 12, v: 11, '0': 0 }
    const control = controls[c]
    if (control !== undefined) return control
    const hex = c === 'x' ? 2 : c === 'u' ? 4 : 0
    if (hex > 0) {
      const digits = this.source.slice(this.at, this.at + hex)
      if (!new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) this.fail(`a bad \\${c} escape`)
      this.at += hex
      return Number.parseInt(digits, 16)
    }
    if (/[A-Za-z]/.test(c)) this.fail(`an unknown escape \\${c}`)
    return c.charCodeAt(0)
  }

  private charClass(): Test {
    const negated = this.peek() === '^'
    if (negated) this.at++
    const parts: Test[] = []
    while (this.peek() !== ']') {
      if (this.peek() === undefined) this.fail(`missing ']'`)
      const low = this.classAtom()
      if (this.peek() === '-' && this.source[this.at + 1] !== ']' && typeof low === 'number') {
        this.at++
        const high = this.classAtom()
        if (typeof high !== 'number') this.fail('a range of a shorthand class')
        if (high < low) this.fail('range out of order in character class')
        parts.push(this.literalRange(low, high))
      } else parts.push(typeof low === 'number' ? this.literal(low) : low)
    }
    this.at++
    const test: Test = (code) => parts.some((part) => part(code))
    return negated ? not(test) : test
  }

  /** One member of a class: a character's code, or a shorthand class's test. */
  private classAtom(): number | Test {
    const c = this.source[this.at++] as string
    if (c !== '\\') return c.charCodeAt(0)
    const e = this.source[this.at]
    if (e === 'b') {
      this.at++
      return 8
    }
    if (e !== undefined && 'dDwWsS'.includes(e)) return this.escapedTest()
    this.at++
    return this.escapedCode(e ?? '')
  }

  private literal(code: number): Test {
    return this.literalRange(code, code)
  }

  private literalRange(low: number, high: number): Test {
    const within: Test = (c) => c >= low && c <= high
    if (!this.ignoreCase) return within
    return (c) => within(c) || within(caseFold(c, 'lower')) || within(caseFold(c, 'upper'))
  }

  private char(test: Test): Node {
    return { t: 'char', test }
  }
}

function caseFold(code: number, to: 'lower' | 'upper'): number {
  const text = String.fromCharCode(code)
  const folded = to === 'lower' ? text.toLowerCase() : text.toUpperCase()
  return folded.length === 1 ? folded.charCodeAt(0) : code
}
