import { describe, expect, it } from 'vitest'
import { schemaWithoutPatterns } from '../../src/core/tools/schema-without-patterns.ts'
import { checkArguments } from '../../src/core/tools/tool-arguments.ts'

/**
 * A tool's schema is a tenant's or an MCP server's, its arguments the model's: a backtracking
 * `pattern` run against them held the process every tenant shares (`^(a+)+$` against 28
 * characters: 1.6 s, doubling with each more). Turnline's check leaves the schema's regular expressions to the tool.
 */
describe('tool argument check without the schema’s regular expressions', () => {
  it('does not run a pattern: the tool checks it', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', pattern: '^a$' } } }
    expect(checkArguments(JSON.stringify({ q: 'b' }), schema)).toEqual({
      ok: true,
      value: { q: 'b' },
    })
    // A backtracking pattern answers at once (≈ 2 s with 28 characters when it was run).
    const evil = { type: 'object', properties: { q: { type: 'string', pattern: '^(a+)+$' } } }
    const q = `${'a'.repeat(28)}!`
    expect(checkArguments(JSON.stringify({ q }), evil)).toEqual({ ok: true, value: { q } })
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
    expect(checkArguments('{"pattern":"z","list":[1]}', schema).ok).toBe(true)
    const typed = checkArguments('{"pattern":1}', schema)
    expect(typed.ok).toBe(false)
    expect(checkArguments('{"list":[1]}', schema).ok).toBe(false)
    expect(checkArguments('{"pattern":"z","list":["no"]}', schema).ok).toBe(false)
    expect(checkArguments('{"pattern":"z","other":1}', schema).ok).toBe(false)
  })

  it('lets through what patternProperties allowed, not refusing it as additional', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' } },
      patternProperties: { '^(x+)+$': { type: 'number' } },
      additionalProperties: false,
    }
    expect(schemaWithoutPatterns(schema)).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    })
    expect(checkArguments(`{"a":"s","${'x'.repeat(28)}!":1}`, schema).ok).toBe(true)
    expect(checkArguments('{"a":1}', schema).ok).toBe(false)
  })

  it('leaves the schema it was given unchanged', () => {
    const schema = { type: 'object', properties: { q: { type: 'string', pattern: '^a$' } } }
    const before = structuredClone(schema)
    checkArguments('{"q":"b"}', schema)
    schemaWithoutPatterns(schema)
    expect(schema).toEqual(before)
  })
})
