import { describe, expect, it } from 'vitest'
import { encodeJsonString, encodeJsonValue, type JsonValue } from '../../src/contract/json-value.ts'

/** encodeJsonValue as it was written member by member: what the native fast path must equal. */
function byMembers(value: JsonValue): string {
  if (value === null || typeof value === 'boolean') return String(value)
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`not a JSON number: ${value}`)
    return JSON.stringify(value)
  }
  if (typeof value === 'string') return encodeJsonString(value)
  if (Array.isArray(value)) return `[${value.map(byMembers).join(',')}]`
  const parts: string[] = []
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined) parts.push(`${encodeJsonString(key)}:${byMembers(item)}`)
  }
  return `{${parts.join(',')}}`
}

describe('encodeJsonValue', () => {
  const values: JsonValue[] = [
    { usage: { input_tokens: 10210, output_tokens: 31 }, cost_usd: 0.0015501, pending: false },
    { '2': 'two', b: [1, -0, 1e21, 1.5e-7, 'é', '😀', '\u0000\u001f\b\f\n\r\t"\\'], '1': {} },
    { text: 'null is a word here', nothing: null, list: [null, true] },
    { lone: 'a\uD800b', low: '\uDC00', pair: '\uD83D\uDE00', backslash: '\\ud800 as text' },
    ['\uD800', { '\uDFFF': 1 }],
    'plain',
    12,
    null,
  ]

  it('writes the bytes the member-by-member encoding writes, lone surrogates as U+FFFD', () => {
    for (const value of values) expect(encodeJsonValue(value)).toBe(byMembers(value))
    expect(encodeJsonValue({ lone: 'a\uD800b' })).toBe('{"lone":"a\uFFFDb"}')
    expect(encodeJsonValue({ gone: undefined as unknown as JsonValue, kept: 1 })).toBe('{"kept":1}')
  })

  it('refuses a number that is not finite, wherever it is', () => {
    expect(() => encodeJsonValue({ a: [1, Number.NaN] })).toThrow(RangeError)
    expect(() => encodeJsonValue(Number.POSITIVE_INFINITY)).toThrow(RangeError)
  })
})
