import { nestedDeeperThan } from '../shared/json-depth.ts'
import { encodeJsonValue, type JsonValue } from './json-value.ts'

/**
 * Nesting a parsed value may have; deeper arguments are kept as their text. Stored items are read
 * back by recursive parsers (zod's), whose stack a value nested thousands deep overflows: the
 * turn failed with a RangeError, or a stored one could not be read again.
 */
export const PARSED_JSON_MAX_DEPTH = 64

/**
 * A model's tool-call arguments as an item shows them: the parsed JSON value when re-encoding
 * it gives back exactly the text the model sent (ignoring insignificant whitespace), else the
 * raw text. So what reaches the log is never a lossy rewrite: a number beyond 2^53 or `1e400`,
 * integer-like keys that JavaScript would reorder, a duplicate key, or an unusual spelling
 * (`1.0`, `\u0041`) all keep the model's exact bytes, as a string; so does a value nested deeper
 * than {@link PARSED_JSON_MAX_DEPTH}.
 */
export function exactJsonOrRaw(raw: string): JsonValue {
  if (!mayBeJson(raw)) return raw
  let value: JsonValue
  try {
    value = JSON.parse(raw) as JsonValue
  } catch {
    return raw
  }
  if (nestedDeeperThan(value, PARSED_JSON_MAX_DEPTH)) return raw
  try {
    return encodeJsonValue(value) === minifyJson(raw) ? value : raw
  } catch {
    // not representable (a non-finite number)
    return raw
  }
}

/**
 * False when `text` cannot be JSON for its first and last characters: an object, list or string
 * that is not closed yet — the arguments of a call while they stream, which every update of its
 * item shows. JSON.parse would throw for these, and a thrown SyntaxError (with its stack) costs
 * several times the parse.
 */
function mayBeJson(text: string): boolean {
  const first = text.charCodeAt(firstNonSpace(text))
  const last = text.charCodeAt(lastNonSpace(text))
  if (first === OPEN_BRACE) return last === CLOSE_BRACE
  if (first === OPEN_BRACKET) return last === CLOSE_BRACKET
  if (first === QUOTE) return last === QUOTE
  return true
}

const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const QUOTE = 0x22

function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
}

function firstNonSpace(text: string): number {
  let i = 0
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++
  return i
}

function lastNonSpace(text: string): number {
  let i = text.length - 1
  while (i > 0 && isJsonSpace(text.charCodeAt(i))) i--
  return i
}

/** JSON text without whitespace outside strings (the text must already be valid JSON). */
export function minifyJson(text: string): string {
  let out = ''
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string
    if (inString) {
      out += ch
      if (ch === '\\') {
        out += text[i + 1] ?? ''
        i++
      } else if (ch === '"') {
        inString = false
      }
    } else if (ch === '"') {
      inString = true
      out += ch
    } else if (ch !== ' ' && ch !== '\n' && ch !== '\r' && ch !== '\t') {
      out += ch
    }
  }
  return out
}
