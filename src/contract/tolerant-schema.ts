import * as z from 'zod'

/**
 * A schema as a reader of a newer writer needs it: the same checks, except that every object in
 * it, however deep (inside arrays, unions, optionals, records, pipes, lazy schemas), drops keys
 * it does not know instead of refusing them. Strict objects (`z.strictObject`, the request
 * schemas that reject a misspelt field) become stripping ones; loose ones stay loose. The output
 * type is the same, since a strict and a stripping object read to the same value.
 *
 * The API's documented response schemas (`*-responses.ts`) are strict about extra fields in
 * the OpenAPI document; `wire-responses.ts` derives the client's readers from them with this.
 */
export function tolerant<S extends z.ZodType>(schema: S): S {
  return walk(schema, new Map()) as S
}

type Def = Record<string, unknown> & { type: string }
type Seen = Map<z.ZodType, z.ZodType>

function walk(schema: z.ZodType, seen: Seen): z.ZodType {
  const known = seen.get(schema)
  if (known) return known
  const def = schema._zod.def as unknown as Def
  const made = rebuild(schema, def, seen)
  seen.set(schema, made)
  return made
}

function rebuild(schema: z.ZodType, def: Def, seen: Seen): z.ZodType {
  const inner = (key: string) => walk(def[key] as z.ZodType, seen)
  switch (def.type) {
    case 'object': {
      const shape: Record<string, z.ZodType> = {}
      for (const [key, value] of Object.entries(def.shape as Record<string, z.ZodType>)) {
        shape[key] = walk(value, seen)
      }
      const catchall = def.catchall as z.ZodType | undefined
      const open = catchall === undefined || catchall._zod.def.type === 'never'
      return clone(schema, { ...def, shape, catchall: open ? undefined : walk(catchall, seen) })
    }
    case 'array':
      return clone(schema, { ...def, element: inner('element') })
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return clone(schema, { ...def, innerType: inner('innerType') })
    case 'union':
      return clone(schema, {
        ...def,
        options: (def.options as z.ZodType[]).map((option) => walk(option, seen)),
      })
    case 'intersection':
      return clone(schema, { ...def, left: inner('left'), right: inner('right') })
    case 'record':
      return clone(schema, { ...def, valueType: inner('valueType') })
    case 'tuple':
      return clone(schema, {
        ...def,
        items: (def.items as z.ZodType[]).map((item) => walk(item, seen)),
        rest: def.rest ? inner('rest') : def.rest,
      })
    case 'pipe':
      return clone(schema, { ...def, in: inner('in'), out: inner('out') })
    case 'lazy': {
      const getter = def.getter as () => z.ZodType
      return z.lazy(() => walk(getter(), seen))
    }
    default:
      return schema
  }
}

function clone(schema: z.ZodType, def: Def): z.ZodType {
  return schema.clone(def as unknown as typeof schema._zod.def)
}
