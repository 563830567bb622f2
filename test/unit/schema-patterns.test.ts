import { describe, expect, it } from 'vitest'
import { PATTERN_SCAN_LIMIT, schemaForArguments } from '../../src/core/tools/schema-patterns.ts'
import { checkArguments } from '../../src/core/tools/tool-arguments.ts'

/**
 * A tool's schema is a tenant's or an MCP server's, its arguments the model's: a backtracking
 * `pattern` run by JavaScript's engine against them held the process every tenant shares
 * (`^(a+)+$` against 28 characters: 1.6 s, doubling with each more). The linear engine runs
 * them instead; what it refuses is left to the tool.
 */
describe('tool argument check with the schema’s regular expressions run by the linear engine', () => {
  const withPattern = (pattern: string) => ({
    type: 'object',
    properties: { q: { type: 'string', pattern } },
  })

  it('refuses a string that does not match a pattern, and says where', () => {
    expect(checkArguments('{"q":"b"}', withPattern('^a$'))).toEqual({
      ok: false,
      reason: "arguments do not match the tool's schema: #/q: String does not match pattern.",
    })
    expect(checkArguments('{"q":"a"}', withPattern('^a$')).ok).toBe(true)
    // Unanchored search, as ECMA-262's `test`: the match may be anywhere.
    expect(checkArguments('{"q":"xx-12-yy"}', withPattern('\\d{2}')).ok).toBe(true)
    expect(checkArguments('{"q":"x-1-y"}', withPattern('\\d{2}')).ok).toBe(false)
    // A string holding the pattern's own syntax is matched as text.
    expect(checkArguments('{"q":"a.*(|"}', withPattern('^a')).ok).toBe(true)
    // Outside the BMP the `u` flag counts code points, the linear engine code units: not refused.
    expect(checkArguments('{"q":"😀"}', withPattern('^.$')).ok).toBe(true)
  })

  it('answers a catastrophic pattern in linear time', () => {
    // JavaScript's engine would not finish in the lifetime of the universe (28 characters: 1.6 s).
    const q = `${'a'.repeat(10_000)}!`
    expect(checkArguments(JSON.stringify({ q }), withPattern('^(a+)+$')).ok).toBe(false)
    expect(
      checkArguments(JSON.stringify({ q: 'a'.repeat(10_000) }), withPattern('^(a+)+$')).ok,
    ).toBe(true)
  })

  it('leaves to the tool a pattern the linear engine refuses', () => {
    const backReference = withPattern('^(a)\\1$')
    expect(checkArguments('{"q":"ab"}', backReference)).toEqual({ ok: true, value: { q: 'ab' } })
    expect(schemaForArguments(backReference, { q: 'ab' })).toEqual({
      schema: { type: 'object', properties: { q: { type: 'string' } } },
      perValue: false,
    })
    expect(checkArguments('{"q":1}', backReference).ok).toBe(false)
  })

  it('keeps every other check, in nested schemas too', () => {
    const schema = {
      type: 'object',
      properties: {
        pattern: { type: 'string', pattern: '^x' },
        list: { type: 'array', items: { type: 'integer', pattern: 'y' } },
      },
      required: ['pattern'],
      additionalProperties: false,
    }
    expect(checkArguments('{"pattern":"xz","list":[1]}', schema).ok).toBe(true)
    expect(checkArguments('{"pattern":"z","list":[1]}', schema).ok).toBe(false)
    expect(checkArguments('{"pattern":1}', schema).ok).toBe(false)
    expect(checkArguments('{"list":[1]}', schema).ok).toBe(false)
    expect(checkArguments('{"pattern":"x","list":["no"]}', schema).ok).toBe(false)
    expect(checkArguments('{"pattern":"x","other":1}', schema).ok).toBe(false)
    const names = { type: 'object', propertyNames: { pattern: '^[a-z]+$' } }
    expect(checkArguments('{"ab":1}', names).ok).toBe(true)
    expect(checkArguments('{"A":1}', names).ok).toBe(false)
  })

  it('checks patternProperties names, and relaxes additionalProperties where one is refused', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' } },
      patternProperties: { '^(x+)+$': { type: 'number' }, '^x': { type: 'integer' } },
      additionalProperties: false,
    }
    expect(checkArguments(`{"a":"s","${'x'.repeat(10_000)}":1}`, schema).ok).toBe(true)
    expect(checkArguments(`{"a":"s","${'x'.repeat(10_000)}":1.5}`, schema).ok).toBe(false)
    expect(checkArguments(`{"a":"s","${'x'.repeat(10_000)}":"no"}`, schema).ok).toBe(false)
    expect(checkArguments('{"a":"s","xy":1}', schema).ok).toBe(true)
    expect(checkArguments('{"a":"s","y":1}', schema).ok).toBe(false)
    expect(checkArguments('{"a":1}', schema).ok).toBe(false)
    const lookahead = {
      type: 'object',
      properties: { a: { type: 'string' } },
      patternProperties: { '^(?=x)': { type: 'number' } },
      additionalProperties: false,
    }
    expect(schemaForArguments(lookahead, {}).schema).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      patternProperties: {},
    })
    expect(checkArguments('{"a":"s","xy":"not a number"}', lookahead).ok).toBe(true)
  })

  it('leaves the schema it was given unchanged', () => {
    const schema = withPattern('^a$')
    const before = structuredClone(schema)
    checkArguments('{"q":"b"}', schema)
    schemaForArguments(schema, { q: 'b' })
    expect(schema).toEqual(before)
  })
})

describe('the work of one call’s patterns', () => {
  it('reads at most PATTERN_SCAN_LIMIT characters together; later patterns are left out', () => {
    // 64 patterns over the same 16 KiB: 1 MiB read before, each pattern's list as long again.
    const properties: Record<string, unknown> = { text: { type: 'string' } }
    for (let index = 0; index < 64; index++) properties[`p${index}`] = { pattern: '^b' }
    const schema = { type: 'object', properties }
    const value = { text: 'a'.repeat(16 * 1024) }
    const checked = schemaForArguments(schema, value).schema as {
      properties: Record<string, { pattern?: string }>
    }
    const kept = Object.values(checked.properties).filter((sub) => sub.pattern !== undefined)
    expect(kept.length).toBeGreaterThan(0)
    expect(kept.length * (16 * 1024 + 1)).toBeLessThanOrEqual(PATTERN_SCAN_LIMIT)
    expect(kept.length).toBeLessThan(64)
    // A pattern within the limit is still checked.
    expect(checkArguments('{"q":"b"}', { properties: { q: { pattern: '^a$' } } }).ok).toBe(false)
  })
})
