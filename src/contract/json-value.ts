import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/** Any JSON value, as JSON.parse produces it. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue }
export type JsonObject = { [key: string]: JsonValue }

/**
 * What `z.json()` accepts, written out so that the recursion names itself: JSON Schema (and the
 * OpenAPI document) shows it as the one `JsonValue` definition.
 */
export const JsonValueSchema: z.ZodType<JsonValue> = lazySchema(() =>
  z
    .lazy(() =>
      z.union([
        z.string(),
        z.number(),
        z.boolean(),
        z.null(),
        z.array(JsonValueSchema),
        z.record(z.string(), JsonValueSchema),
      ]),
    )
    .meta({ id: 'JsonValue', description: 'Any JSON value.' }),
)
export const JsonObjectSchema: z.ZodType<JsonObject> = lazySchema(() =>
  z.record(z.string(), JsonValueSchema),
)

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * JSON string literal for `text`. Unpaired UTF-16 surrogates (e.g. from output cut in the middle
 * of a character) become U+FFFD: Rust strings cannot hold them, so a line carrying one would be
 * unreadable by VT Code. Escaping otherwise matches serde_json (`"`, `\`, short escapes for
 * \b \f \n \r \t, `\u00xx` lowercase for other control characters, everything else literal).
 */
export function encodeJsonString(text: string): string {
  LONE_SURROGATE.lastIndex = 0
  const wellFormed = LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATE, '\uFFFD') : text
  return JSON.stringify(wellFormed)
}

/** Compact JSON text for `value`; object keys in insertion order, strings as encodeJsonString. */
export function encodeJsonValue(value: JsonValue): string {
  if (value === null || typeof value === 'boolean') return String(value)
  if (typeof value === 'number') return encodeFiniteNumber(value)
  if (typeof value === 'string') return encodeJsonString(value)
  if (Array.isArray(value)) return `[${value.map(encodeJsonValue).join(',')}]`
  const parts: string[] = []
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue
    parts.push(`${encodeJsonString(key)}:${encodeJsonValue(item)}`)
  }
  return `{${parts.join(',')}}`
}

function encodeFiniteNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a JSON number: ${value}`)
  return JSON.stringify(value)
}

/**
 * Compact JSON object with members written in `keys` order (undefined members omitted), each
 * encoded by `encodeMember` (plain JSON by default). Members not named in `keys` are dropped.
 */
export function encodeOrderedObject(
  value: Readonly<Record<string, unknown>>,
  keys: readonly string[],
  encodeMember: (key: string, member: unknown) => string = encodePlainMember,
): string {
  const parts: string[] = []
  for (const key of keys) {
    const member = value[key]
    if (member !== undefined) parts.push(`${encodeJsonString(key)}:${encodeMember(key, member)}`)
  }
  return `{${parts.join(',')}}`
}

export function encodePlainMember(_key: string, member: unknown): string {
  return encodeJsonValue(member as JsonValue)
}
