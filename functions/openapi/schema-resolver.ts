import type { ResolverReturnType } from 'hono-openapi'
import * as z from 'zod'

/**
 * A zod schema as hono-openapi takes it (its `resolver()` shape), converted with zod's own
 * `z.toJSONSchema`. Schemas named with `.meta({ id })` become `components.schemas` entries and
 * `$ref`s. The conversion refuses what would make a wrong document: an unnamed recursive schema
 * (zod would call it `__schema0` in every conversion, and they would overwrite each other) and a
 * name that stands for two different schemas (a schema shown both as input and as output, where
 * defaults make them differ).
 */

type Json = Record<string, unknown>
export type Direction = 'input' | 'output'
type OpenApiResult = Awaited<ReturnType<ResolverReturnType['toOpenAPISchema']>>

/** What each component name stood for so far: one schema per name in the whole document. */
const named = new Map<string, string>()

export function schemaResolver(schema: z.ZodType, io: Direction): ResolverReturnType {
  return {
    vendor: 'zod',
    validate: (value) => schema['~standard'].validate(value),
    toJSONSchema: () => z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as never,
    // Plain JSON Schema objects; openapi-types spells them with its own (3.1) types.
    toOpenAPISchema: async () => toOpenApiSchema(schema, io) as unknown as OpenApiResult,
  }
}

export function toOpenApiSchema(
  schema: z.ZodType,
  io: Direction,
): { schema: Json; components: { schemas: Record<string, Json> } | undefined } {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json
  const { $schema: _, $defs, ...root } = json
  const defs = ($defs ?? {}) as Record<string, Json>
  for (const [name, definition] of Object.entries(defs)) {
    if (name.startsWith('__schema')) {
      throw new Error(
        `a recursive schema has no name: give it .meta({ id }) (in ${JSON.stringify(root).slice(0, 200)})`,
      )
    }
    const text = JSON.stringify(definition)
    const before = named.get(name)
    if (before !== undefined && before !== text) {
      throw new Error(
        `schema ${name} differs where it is used (${io}); name only schemas that read the same both ways`,
      )
    }
    named.set(name, text)
  }
  const converted = rewriteRefs(root) as Json
  if (Object.keys(defs).length === 0) return { schema: converted, components: undefined }
  return { schema: converted, components: { schemas: rewriteRefs(defs) as Record<string, Json> } }
}

/** `#/$defs/X` → `#/components/schemas/X`, everywhere in `value`. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs)
  if (typeof value !== 'object' || value === null) return value
  const out: Json = {}
  for (const [key, item] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof item === 'string' && item.startsWith('#/$defs/')
        ? `#/components/schemas/${item.slice('#/$defs/'.length)}`
        : rewriteRefs(item)
  }
  return out
}
