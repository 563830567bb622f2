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

/**
 * Compact JSON text for `value`; object keys in insertion order, strings as encodeJsonString.
 * Written by `JSON.stringify` (native: for every JSON value the same bytes, keys in the same
 * order, the same escapes) unless its text holds what it writes otherwise: a `\ud…` escape (a
 * lone surrogate, which becomes U+FFFD here, or a backslash before "ud"), or a `null` that does
 * not stand for a null (a number that is not finite, which this refuses, or a hole); then
 * member by member.
 */
export function encodeJsonValue(value: JsonValue): string {
  const text = JSON.stringify(value) as string | undefined
  if (
    text === undefined ||
    text.includes('\\ud') ||
    (text.includes('null') && !nullsAreNulls(value))
  ) {
    return encodeMembers(value)
  }
  return text
}

/** Whether JSON.stringify writes `null` only for nulls in `value` (no NaN, no hole, no function in a list). */
function nullsAreNulls(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value)
  if (typeof value !== 'object' || value === null) return true
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') return false
      if (!nullsAreNulls(item)) return false
    }
    return true
  }
  for (const key in value) {
    if (!nullsAreNulls((value as Record<string, unknown>)[key])) return false
  }
  return true
}

function encodeMembers(value: JsonValue): string {
  if (value === null || typeof value === 'boolean') return String(value)
  if (typeof value === 'number') return encodeFiniteNumber(value)
  if (typeof value === 'string') return encodeJsonString(value)
  if (Array.isArray(value)) return `[${value.map(encodeMembers).join(',')}]`
  const parts: string[] = []
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue
    parts.push(`${encodeJsonString(key)}:${encodeMembers(item)}`)
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
  let text = ''
  for (const key of keys) {
    const member = value[key]
    if (member === undefined) continue
    text += `${text === '' ? '{' : ','}${memberName(key)}${encodeMember(key, member)}`
  }
  return text === '' ? '{}' : `${text}}`
}

/**
 * `"key":` for a key of a document's key list, written once per key: the lists are the
 * schemas' own, so the names are few (bounded all the same).
 */
const memberNames = new Map<string, string>()

function memberName(key: string): string {
  let name = memberNames.get(key)
  if (name === undefined) {
    name = `${encodeJsonString(key)}:`
    if (memberNames.size < 4096) memberNames.set(key, name)
  }
  return name
}

export function encodePlainMember(_key: string, member: unknown): string {
  return encodeJsonValue(member as JsonValue)
}
