import { describe, expect, it } from 'vitest'
import { rememberCommittedState, statePatch } from '../../src/core/engine/writable-state.ts'

describe('statePatch', () => {
  it('commits every field over no state, each a private copy', () => {
    const after = { a: { n: 1 }, b: [1, 2] }
    const { patch, fields } = statePatch(undefined, after)
    expect(patch).toEqual(after)
    expect(patch.a).not.toBe(after.a)
    expect(fields).toEqual(
      new Map([
        ['a', '{"n":1}'],
        ['b', '[1,2]'],
      ]),
    )
  })

  it('leaves out the fields whose JSON is unchanged, keeps new and changed ones', () => {
    const before = { a: { n: 1 }, b: [1, 2], gone: true }
    const { patch } = statePatch(before, { a: { n: 1 }, b: [1, 3], c: null })
    expect(patch).toEqual({ b: [1, 3], c: null })
  })

  it('compares a committed state through the JSON it kept, and keeps it current', () => {
    const first = statePatch(undefined, { a: { n: 1 }, b: 'x' })
    const committed = { ...first.patch }
    rememberCommittedState(committed, first.fields)
    const second = statePatch(committed, { a: { n: 2 }, b: 'x' })
    expect(second.patch).toEqual({ a: { n: 2 } })
    const next = { ...committed, ...second.patch }
    rememberCommittedState(next, second.fields)
    expect(statePatch(next, { a: { n: 2 }, b: 'x' }).patch).toEqual({})
    expect(statePatch(next, { a: { n: 1 }, b: 'x' }).patch).toEqual({ a: { n: 1 } })
  })
})
