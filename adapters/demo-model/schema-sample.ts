/**
 * A deterministic instance of a JSON Schema, so the offline demo model can answer a session that
 * asks for structured output (`output_schema`) with JSON of that shape. Covers what structured
 * outputs use: objects (every property), arrays, scalars, enum, const, default, anyOf/oneOf/allOf
 * (the first branch) and local `$ref`s. Strings say they come from the demo model.
 */
type Schema = Record<string, unknown>

const MAX_DEPTH = 12
export const DEMO_STRING = 'offline demo value'

export function schemaSample(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (!isSchema(schema) || depth > MAX_DEPTH) return null
  if ('const' in schema) return schema.const
  if ('default' in schema) return schema.default
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  if (typeof schema.$ref === 'string') {
    return schemaSample(resolveRef(schema.$ref, root), root, depth + 1)
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key]
    if (Array.isArray(branches) && branches.length > 0) {
      const first = branches.find((b) => !(isSchema(b) && b.type === 'null')) ?? branches[0]
      return schemaSample(first, root, depth + 1)
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const merged = Object.assign({}, ...schema.allOf.filter(isSchema), { allOf: undefined })
    return schemaSample({ ...merged, ...withoutAllOf(schema) }, root, depth + 1)
  }
  const type = Array.isArray(schema.type)
    ? (schema.type.find((t) => t !== 'null') ?? schema.type[0])
    : schema.type
  switch (type) {
    case 'object':
      return objectSample(schema, root, depth)
    case 'array': {
      const count = typeof schema.minItems === 'number' ? Math.max(1, schema.minItems) : 1
      return Array.from({ length: count }, () => schemaSample(schema.items ?? {}, root, depth + 1))
    }
    case 'string':
      return stringSample(schema)
    case 'integer':
    case 'number':
      return numberSample(schema, type === 'integer')
    case 'boolean':
      return true
    case 'null':
      return null
    default:
      return isSchema(schema.properties) ? objectSample(schema, root, depth) : DEMO_STRING
  }
}

function objectSample(schema: Schema, root: unknown, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const properties = isSchema(schema.properties) ? schema.properties : {}
  for (const [name, property] of Object.entries(properties)) {
    out[name] = schemaSample(property, root, depth + 1)
  }
  return out
}

function stringSample(schema: Schema): string {
  if (schema.format === 'date-time') return '2000-01-01T00:00:00Z'
  if (schema.format === 'date') return '2000-01-01'
  if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/'
  if (schema.format === 'email') return 'demo@example.com'
  if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000'
  let value = DEMO_STRING
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY
  while (value.length < min) value += ` ${DEMO_STRING}`
  return value.slice(0, Math.max(min, Math.min(max, value.length)))
}

function numberSample(schema: Schema, integer: boolean): number {
  const low = numeric(schema.minimum) ?? numeric(schema.exclusiveMinimum)
  const high = numeric(schema.maximum) ?? numeric(schema.exclusiveMaximum)
  let value = low !== undefined ? low : high !== undefined ? Math.min(0, high) : 0
  if (numeric(schema.exclusiveMinimum) !== undefined && value === schema.exclusiveMinimum) {
    value += integer ? 1 : 0.5
  }
  return integer ? Math.ceil(value) : value
}

function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#/')) return {}
  let node: unknown = root
  for (const part of ref.slice(2).split('/')) {
    const key = part.replaceAll('~1', '/').replaceAll('~0', '~')
    node = isSchema(node) ? node[key] : undefined
  }
  return node ?? {}
}

function withoutAllOf(schema: Schema): Schema {
  const { allOf: _allOf, ...rest } = schema
  return rest
}

const numeric = (value: unknown) => (typeof value === 'number' ? value : undefined)

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
