/**
 * JSON text → value, with Turnline's own description of a syntax error. `JSON.parse` messages
 * differ between JavaScript engines (V8 in Node 20 says "… at position 1", V8 in Node 22, Deno
 * and workerd add "(line 1 column 2)", other engines word it differently), and such a message
 * reaches stored events and model input (a tool call whose arguments are not JSON). Where the
 * text goes anywhere but a log, the reason comes from here: the same on every runtime.
 *
 * The scan runs only after `JSON.parse` threw, over the same grammar (RFC 8259, which is what
 * `JSON.parse` accepts), and stops at the first character that cannot continue a JSON text. It
 * keeps an explicit stack: no recursion, so any depth of nesting is fine.
 */

export type JsonParse = { ok: true; value: unknown } | { ok: false; reason: string }

/** `JSON.parse`, or the reason the text is not JSON (see {@link jsonSyntaxError}). */
export function parseJson(text: string): JsonParse {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false, reason: jsonSyntaxError(text) }
  }
}

/**
 * Where and why `text` is not JSON: `expected ',' or '}', found 'x' at line 1 column 9
 * (position 8)`. Positions count UTF-16 code units from 0 (as string indexes do); lines and
 * columns count from 1, lines ending at `\n`.
 */
export function jsonSyntaxError(text: string): string {
  const failure = new JsonScanner(text).firstError()
  // The grammar here is JSON.parse's; a text it accepts is not expected here.
  if (!failure) return 'not a JSON text'
  return `${failure.problem} ${where(text, failure.at)}`
}

interface Failure {
  problem: string
  at: number
}

type Frame = 'array' | 'object'

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't'])
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c)

class JsonScanner {
  readonly #text: string
  #at = 0
  readonly #stack: Frame[] = []

  constructor(text: string) {
    this.#text = text
  }

  firstError(): Failure | undefined {
    try {
      this.#document()
      return undefined
    } catch (error) {
      if (error instanceof ScanStop) return error.failure
      throw error
    }
  }

  #document(): void {
    this.#value()
    for (;;) {
      const frame = this.#stack.at(-1)
      if (!frame) break
      this.#space()
      const c = this.#text[this.#at]
      const close = frame === 'array' ? ']' : '}'
      if (c === close) {
        this.#at++
        this.#stack.pop()
        continue
      }
      if (c !== ',') this.#fail(`',' or '${close}'`)
      this.#at++
      if (frame === 'object') this.#member()
      else this.#value()
    }
    this.#space()
    if (this.#at < this.#text.length) this.#fail('the end of the text')
  }

  /**
   * One value. An array or object opened here is left on the stack for #document to close; its
   * first element is read here, by going round again (no recursion).
   */
  #value(): void {
    for (;;) {
      this.#space()
      const c = this.#text[this.#at]
      if (c === '{' || c === '[') {
        const close = c === '{' ? '}' : ']'
        this.#at++
        this.#space()
        if (this.#text[this.#at] === close) {
          this.#at++
          return
        }
        this.#stack.push(c === '{' ? 'object' : 'array')
        if (c === '{') this.#name()
        continue
      }
      if (c === '"') this.#string()
      else if (c === '-' || isDigit(c)) this.#number()
      else if (c === 't' || c === 'f' || c === 'n')
        this.#literal(c === 't' ? 'true' : c === 'f' ? 'false' : 'null')
      else this.#fail('a value')
      return
    }
  }

  /** `"name": value` (the value may open a nested array or object). */
  #member(): void {
    this.#name()
    this.#value()
  }

  /** `"name":`, up to where the value starts. */
  #name(): void {
    this.#space()
    if (this.#text[this.#at] !== '"') this.#fail('a property name in double quotes')
    this.#string()
    this.#space()
    if (this.#text[this.#at] !== ':') this.#fail("':'")
    this.#at++
  }

  #string(): void {
    this.#at++ // the opening quote
    for (;;) {
      const c = this.#text[this.#at]
      if (c === undefined) this.#fail("a closing '\"'")
      if (c === '"') {
        this.#at++
        return
      }
      if (c < ' ') this.#fail('an escaped control character (\\n, \\t, \\u0000 …)')
      if (c === '\\') {
        const next = this.#text[this.#at + 1]
        if (next === 'u') {
          for (let i = 2; i < 6; i++) {
            if (!isHex(this.#text[this.#at + i])) {
              this.#at += i
              this.#fail('a hex digit')
            }
          }
          this.#at += 6
          continue
        }
        this.#at++
        if (next === undefined || !ESCAPES.has(next))
          this.#fail('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)')
        this.#at++
        continue
      }
      this.#at++
    }
  }

  #number(): void {
    if (this.#text[this.#at] === '-') this.#at++
    if (this.#text[this.#at] === '0') this.#at++
    else this.#digits()
    if (this.#text[this.#at] === '.') {
      this.#at++
      this.#digits()
    }
    const e = this.#text[this.#at]
    if (e === 'e' || e === 'E') {
      this.#at++
      const sign = this.#text[this.#at]
      if (sign === '+' || sign === '-') this.#at++
      this.#digits()
    }
  }

  #digits(): void {
    if (!isDigit(this.#text[this.#at])) this.#fail('a digit')
    while (isDigit(this.#text[this.#at])) this.#at++
  }

  #literal(word: string): void {
    for (let i = 0; i < word.length; i++) {
      if (this.#text[this.#at] !== word[i]) this.#fail(`'${word}'`)
      this.#at++
    }
  }

  #space(): void {
    while (WHITESPACE.has(this.#text[this.#at] ?? '')) this.#at++
  }

  #fail(expected: string): never {
    throw new ScanStop({ problem: `expected ${expected}, found ${this.#found()}`, at: this.#at })
  }

  #found(): string {
    const code = this.#text.charCodeAt(this.#at)
    if (Number.isNaN(code)) return 'the end of the text'
    const printable = code >= 0x20 && code !== 0x7f && (code < 0xd800 || code > 0xdfff)
    if (printable) return `'${this.#text[this.#at]}'`
    const at = this.#text.codePointAt(this.#at) ?? code
    return `U+${at.toString(16).toUpperCase().padStart(4, '0')}`
  }
}

class ScanStop {
  constructor(readonly failure: Failure) {}
}

function where(text: string, at: number): string {
  let line = 1
  let lineStart = 0
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) {
    line++
    lineStart = i + 1
  }
  return `at line ${line} column ${at - lineStart + 1} (position ${at})`
}
