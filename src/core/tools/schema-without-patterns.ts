/** Keywords whose value is one subschema (`items` may also be a list, as in older drafts). */
const ONE = new Set([
  'additionalProperties',
  'additionalItems',
  'contains',
  'else',
  'if',
  'items',
  'not',
  'propertyNames',
  'then',
  'unevaluatedItems',
  'unevaluatedProperties',
])
/** Keywords whose value is a list of subschemas. */
const LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])
/** Keywords whose value maps names to subschemas (`dependencies` may map to name lists). */
const MAP = new Set(['$defs', 'definitions', 'dependencies', 'dependentSchemas', 'properties'])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A copy of a tool's JSON Schema without its regular expressions — `pattern` and
 * `patternProperties` — for the validator that checks the model's arguments. The schema is the
 * tenant's (an HTTP or client tool) or an MCP server's, and the arguments are the model's, which
 * either may steer: a backtracking pattern such as `^(a+)+$` against 28 characters the model
 * wrote runs 1.6 s, twice as long for each character more, synchronously, in the process every tenant shares. The tool's own
 * server checks what its schema says; Turnline checks the rest. Where `patternProperties` goes,
 * that schema's `additionalProperties` and `unevaluatedProperties` go too, so a property the
 * patterns allowed is not refused. A property named `pattern` is a property, and stays.
 */
export function schemaWithoutPatterns(schema: unknown): unknown {
  if (!isObject(schema)) return schema
  const copy: Record<string, unknown> = {}
  let loosened = false
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'pattern') continue
    if (key === 'patternProperties') {
      loosened = true
      continue
    }
    if (ONE.has(key)) {
      copy[key] = Array.isArray(value)
        ? value.map(schemaWithoutPatterns)
        : schemaWithoutPatterns(value)
    } else if (LIST.has(key) && Array.isArray(value)) {
      copy[key] = value.map(schemaWithoutPatterns)
    } else if (MAP.has(key) && isObject(value)) {
      copy[key] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, schemaWithoutPatterns(sub)]),
      )
    } else {
      copy[key] = value
    }
  }
  if (loosened) {
    delete copy.additionalProperties
    delete copy.unevaluatedProperties
  }
  return copy
}
