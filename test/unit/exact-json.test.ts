import { describe, expect, it } from 'vitest'
import { exactJsonOrRaw, minifyJson } from '../../src/contract/exact-json.ts'

describe('tool arguments as items show them', () => {
  it('parses arguments that re-encode exactly, whitespace aside', () => {
    expect(exactJsonOrRaw('{"q": "a b", "n": [1, 2.5, -3e-7]}')).toEqual({
      q: 'a b',
      n: [1, 2.5, -3e-7],
    })
    expect(exactJsonOrRaw('"text"')).toBe('text')
    expect(exactJsonOrRaw(' \n[1, {"a": "}"}]\t\r\n')).toEqual([1, { a: '}' }])
    expect(exactJsonOrRaw('12')).toBe(12)
    expect(exactJsonOrRaw('null')).toBe(null)
  })

  it.each([
    ['a number beyond 2^53', '{"n":9007199254740993}'],
    ['a number beyond f64', '{"n":1e400}'],
    ['integer-like keys JavaScript reorders', '{"b":1,"2":2,"1":3}'],
    ['a duplicate key', '{"a":1,"a":2}'],
    ['an unusual spelling', '{"n":1.0,"s":"\\u0041"}'],
    ['text that is not JSON (yet)', '{"q":"unfinish'],
    ['an unclosed object', ' {"q":"a"} {'],
    ['an unclosed list', '[1, [2]'],
    ['an unclosed string', '"text'],
    ['a lone quote', '"'],
    ['nothing', ''],
    ['only whitespace', ' \n'],
  ])('keeps %s as the raw text', (_why, raw) => {
    expect(exactJsonOrRaw(raw)).toBe(raw)
  })

  it('minifies outside strings only', () => {
    expect(minifyJson('{ "a b" : [ 1 ,\n\t"x\\" y" ] }')).toBe('{"a b":[1,"x\\" y"]}')
  })
})
