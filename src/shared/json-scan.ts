/**
 * Lexical facts about JSON text that JSON.parse does not keep: where a value sits in the text and
 * how a number was spelled. Every function here expects text that JSON.parse already accepted.
 *
 * Kept as our own code on purpose: reading stored event lines needs how fractional numbers were
 * spelled (so `2.0` is written back as `2.0`, byte for byte) and the raw text of an event (kept
 * verbatim for event types this version does not know), in text that JSON.parse has already
 * read. Libraries that keep lexemes (lossless-json and the like) reparse the whole document into
 * their own value types: a second parser to trust for what this scanner answers in one pass.
 */

export type JsonPath = ReadonlyArray<string | number>

export interface NumberLexeme {
  path: JsonPath
  lexeme: string
}

export interface TextSpan {
  start: number
  end: number
}

type ValueKind = 'number' | 'string' | 'literal' | 'container'

interface Frame {
  readonly isArray: boolean
  /** Member name or element index of the value being read in this container. */
  key: string | number
  awaitingKey: boolean
  readonly start: number
}

type Visitor = (stack: readonly Frame[], start: number, end: number, kind: ValueKind) => void

/** A digit directly before `.`, `e` or `E` is necessary for a non-integer numeral. */
const MAY_HOLD_FRACTIONAL = /\d[.eE]/

/**
 * Numbers written with a fraction or an exponent (`3.0`, `1e2`), with their paths. serde_json
 * rejects such numerals for Rust integer fields, while JSON.parse turns them into integers.
 */
export function fractionalNumbers(text: string): NumberLexeme[] {
  if (!MAY_HOLD_FRACTIONAL.test(text)) return []
  const found: NumberLexeme[] = []
  walk(text, (stack, start, end, kind) => {
    if (kind !== 'number') return
    const lexeme = text.slice(start, end)
    if (/[.eE]/.test(lexeme)) found.push({ path: pathOf(stack), lexeme })
  })
  return found
}

/**
 * Span of the value at `path` (e.g. `['events', 3, 'event']`), or undefined when there is none.
 * For a repeated member the last one wins, as with JSON.parse.
 */
export function valueSpan(text: string, path: JsonPath): TextSpan | undefined {
  let span: TextSpan | undefined
  walk(text, (stack, start, end) => {
    if (stack.length !== path.length) return
    for (let depth = 0; depth < path.length; depth++) {
      if (stack[depth]?.key !== path[depth]) return
    }
    span = { start, end }
  })
  return span
}

function pathOf(stack: readonly Frame[]): JsonPath {
  return stack.map((frame) => frame.key)
}

function walk(text: string, visit: Visitor): void {
  const stack: Frame[] = []
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x3a /* : */) {
      i++
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const isArray = c === 0x5b
      stack.push({ isArray, key: isArray ? 0 : '', awaitingKey: !isArray, start: i })
      i++
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      const frame = stack.pop()
      i++
      if (frame !== undefined) visit(stack, frame.start, i, 'container')
    } else if (c === 0x2c /* , */) {
      const top = stack.at(-1)
      if (top?.isArray) top.key = (top.key as number) + 1
      else if (top !== undefined) top.awaitingKey = true
      i++
    } else if (c === 0x22 /* " */) {
      const end = stringEnd(text, i)
      const top = stack.at(-1)
      if (top !== undefined && !top.isArray && top.awaitingKey) {
        top.key = decodeKey(text.slice(i, end))
        top.awaitingKey = false
      } else {
        visit(stack, i, end, 'string')
      }
      i = end
    } else {
      const isNumber = c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)
      const end = tokenEnd(text, i)
      visit(stack, i, end, isNumber ? 'number' : 'literal')
      i = Math.max(end, i + 1)
    }
  }
}

function stringEnd(text: string, quoteAt: number): number {
  let j = quoteAt + 1
  while (j < text.length) {
    const c = text.charCodeAt(j)
    if (c === 0x22) return j + 1
    j += c === 0x5c /* \ */ ? 2 : 1
  }
  return text.length
}

function tokenEnd(text: string, from: number): number {
  let j = from
  while (j < text.length) {
    const c = text.charCodeAt(j)
    const partOfToken =
      (c >= 0x30 && c <= 0x39) ||
      (c >= 0x61 && c <= 0x7a) ||
      c === 0x2d ||
      c === 0x2b ||
      c === 0x2e ||
      c === 0x45
    if (!partOfToken) break
    j++
  }
  return j
}

function decodeKey(quoted: string): string {
  return quoted.includes('\\') ? (JSON.parse(quoted) as string) : quoted.slice(1, -1)
}
