import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { lazySchema } from '../../src/contract/lazy-schema.ts'

/** The same schema written eagerly and through lazySchema, with a count of lazy builds. */
function pair() {
  const build = () =>
    z
      .object({
        id: z.string().min(3).describe('The id.'),
        count: z.number().int().nonnegative().optional(),
        kind: z.enum(['a', 'b']),
      })
      .meta({ id: 'Thing', description: 'A thing.' })
  let builds = 0
  const lazy = lazySchema(() => {
    builds += 1
    return build()
  })
  return { eager: build(), lazy, builds: () => builds }
}

describe('lazySchema', () => {
  it('builds nothing until the schema is used, then once', () => {
    const { lazy, builds } = pair()
    const composed = z.object({ thing: lazy.optional() })
    expect(builds()).toBe(1) // a method of the schema is a use
    const untouched = lazySchema(() => {
      throw new Error('built')
    })
    expect(() => z.object({ thing: untouched })).not.toThrow()
    expect(composed.parse({ thing: { id: 'abc', kind: 'a' } })).toEqual({
      thing: { id: 'abc', kind: 'a' },
    })
    expect(lazy.parse({ id: 'abcd', kind: 'b' })).toEqual({ id: 'abcd', kind: 'b' })
    expect(builds()).toBe(1)
  })

  it('parses, and fails, exactly as the schema built at once', () => {
    const { eager, lazy } = pair()
    for (const input of [
      { id: 'abc', kind: 'a', count: 2 },
      { id: 'ab', kind: 'c', count: -1 },
      { id: 3 },
      null,
      'text',
    ]) {
      const a = eager.safeParse(input)
      const b = lazy.safeParse(input)
      expect(b.success).toBe(a.success)
      expect(b.data).toEqual(a.data)
      expect(b.error?.issues).toEqual(a.error?.issues)
      expect(b.error?.message).toEqual(a.error?.message)
    }
  })

  it('converts to the same JSON Schema, with its id and descriptions, alone and composed', () => {
    const { eager, lazy } = pair()
    const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'output' })
    // A first use by the conversion itself.
    expect(json(z.object({ a: lazy, b: z.array(lazy) }))).toEqual(
      json(z.object({ a: eager, b: z.array(eager) })),
    )
    expect(json(lazy)).toEqual(json(eager))
    expect(json(lazy.describe('Another.'))).toEqual(json(eager.describe('Another.')))
    expect(lazy.meta()).toEqual(eager.meta())
  })

  it('is the kind of schema it builds, with its members', () => {
    const { lazy } = pair()
    expect(lazy).toBeInstanceOf(z.ZodObject)
    expect(lazy instanceof z.ZodString).toBe(false)
    expect(Object.keys(lazy.shape)).toEqual(['id', 'count', 'kind'])
    expect(lazy.extend({ more: z.boolean() }).parse({ id: 'abc', kind: 'a', more: true })).toEqual({
      id: 'abc',
      kind: 'a',
      more: true,
    })
  })

  it('refers to itself through a getter, as a recursive zod schema does', () => {
    type Tree = { name: string; children: Tree[] }
    const TreeSchema: z.ZodType<Tree> = lazySchema(() =>
      z.object({
        name: z.string(),
        get children() {
          return z.array(TreeSchema)
        },
      }),
    )
    const tree = { name: 'a', children: [{ name: 'b', children: [] }] }
    expect(TreeSchema.parse(tree)).toEqual(tree)
    expect(TreeSchema.safeParse({ name: 'a', children: [{ name: 1, children: [] }] }).success).toBe(
      false,
    )
  })

  it('refuses a build that uses the schema it builds, and builds on a later use', () => {
    let selfUse = true
    const Odd: z.ZodType<string> = lazySchema(() =>
      selfUse ? Odd.optional().pipe(z.string()) : z.string(),
    )
    expect(() => Odd.parse('x')).toThrow('a lazy schema was used while it was being built')
    selfUse = false
    expect(Odd.parse('x')).toBe('x')
  })
})

describe('lazySchema before its first use', () => {
  it('answers `in` for what every zod schema has, and converts on its first use', () => {
    const { eager, lazy, builds } = pair()
    expect('_zod' in lazy).toBe(true)
    expect('parse' in lazy).toBe(true)
    expect('_idmap' in lazy).toBe(false)
    expect(builds()).toBe(0)
    expect(z.toJSONSchema(lazy)).toEqual(z.toJSONSchema(eager))
    expect(builds()).toBe(1)
    expect('shape' in lazy).toBe(true)
  })
})
