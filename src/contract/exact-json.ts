import { encodeJsonValue, type JsonValue } from './json-value.ts'

/**
 * A model's tool-call arguments as an item shows them: the parsed JSON value when re-encoding
 * it gives back exactly the text the model sent (ignoring insignificant whitespace), else the
 * raw text. So what reaches the log is never a lossy rewrite: a number beyond 2^53 or `1e400`,
 * integer-like keys that JavaScript would reorder, a duplicate key, or an unusual spelling
 * (`1.0`, `\u0041`) all keep the model's exact bytes, as a string.
 */
export function exactJsonOrRaw(raw: string): JsonValue {
  let value: JsonValue
  try {
    value = JSON.parse(raw) as JsonValue
  } catch {
    return raw
  }
  try {
    return encodeJsonValue(value) === minifyJson(raw) ? value : raw
  } catch {
    // not representable (a non-finite number)
    return raw
  }
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
