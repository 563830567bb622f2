import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { tolerant } from '../../src/contract/tolerant-schema.ts'

type Tree = { name: string; children: Tree[] }
const TreeSchema: z.ZodType<Tree> = z.lazy(() =>
  z.strictObject({ name: z.string(), children: z.array(TreeSchema) }),
)

describe('tolerant', () => {
  it('drops unknown keys at every depth, through unions, records, tuples and recursion', () => {
    const schema = z.strictObject({
      kind: z.discriminatedUnion('type', [
        z.strictObject({ type: z.literal('a'), a: z.number() }),
        z.strictObject({ type: z.literal('b'), b: z.string().optional() }),
      ]),
      map: z.record(z.string(), z.strictObject({ n: z.number() })).optional(),
      pair: z.tuple([z.strictObject({ x: z.number() }), z.string()]),
      tree: TreeSchema,
      open: z.looseObject({ keep: z.boolean() }),
      piped: z.strictObject({ v: z.number() }).transform((value) => value.v * 2),
    })
    const value = {
      kind: { type: 'b', extra: 1 },
      map: { k: { n: 1, extra: 2 } },
      pair: [{ x: 1, extra: 3 }, 's'],
      tree: { name: 'r', extra: 4, children: [{ name: 'c', children: [], extra: 5 }] },
      open: { keep: true, more: 'kept' },
      piped: { v: 2, extra: 6 },
      top: 7,
    }
    expect(schema.safeParse(value).success).toBe(false)
    expect(tolerant(schema).parse(value)).toEqual({
      kind: { type: 'b' },
      map: { k: { n: 1 } },
      pair: [{ x: 1 }, 's'],
      tree: { name: 'r', children: [{ name: 'c', children: [] }] },
      open: { keep: true, more: 'kept' },
      piped: 4,
    })
  })

  it('keeps every check of the known fields and leaves the source schema as it was', () => {
    const schema = z
      .strictObject({ n: z.number().int().min(1), tag: z.enum(['x', 'y']) })
      .refine((value) => value.n < 10, 'n must be below 10')
    const reader = tolerant(schema)
    expect(reader.safeParse({ n: 1.5, tag: 'x' }).success).toBe(false)
    expect(reader.safeParse({ n: 1, tag: 'z' }).success).toBe(false)
    expect(reader.safeParse({ n: 12, tag: 'x', extra: 1 }).success).toBe(false)
    expect(reader.parse({ n: 2, tag: 'y', extra: 1 })).toEqual({ n: 2, tag: 'y' })
    expect(schema.safeParse({ n: 2, tag: 'y', extra: 1 }).success).toBe(false)
  })
})
