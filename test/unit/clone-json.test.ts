import { describe, expect, it } from 'vitest'
import { cloneJson } from '../../src/shared/clone-json.ts'

describe('cloneJson', () => {
  it('copies a JSON value deeply: equal, and nothing shared with the original', () => {
    const original = {
      open_turn: { id: 't1', steps: [1, 2, { deep: ['x'] }] },
      usage: { input_tokens: 3, nested: { a: null } },
      flag: true,
      text: 'é',
      empty: [],
      cleared: undefined,
    }
    const copy = cloneJson(original)
    expect(copy).toStrictEqual(original)
    expect('cleared' in copy).toBe(true)
    copy.open_turn.steps.push(3)
    ;(copy.open_turn.steps[2] as { deep: string[] }).deep.push('y')
    copy.usage.nested.a = null
    copy.usage.input_tokens = 9
    expect(original.open_turn.steps).toEqual([1, 2, { deep: ['x'] }])
    expect(original.usage.input_tokens).toBe(3)
    expect(copy.usage.nested).not.toBe(original.usage.nested)
  })

  it('answers primitives and null as they are', () => {
    expect(cloneJson(null)).toBeNull()
    expect(cloneJson(5)).toBe(5)
    expect(cloneJson('s')).toBe('s')
    expect(cloneJson([null, [1]])).toEqual([null, [1]])
  })
})
