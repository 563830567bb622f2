/**
 * Walks an OpenAPI document's schemas and names every object property that has no description
 * (a `$ref` counts as described when the schema it points to is).
 */

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export function undescribedFields(document: Json): string[] {
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Json
  const described = (schema: unknown): boolean => {
    if (!isObject(schema)) return false
    if (typeof schema.description === 'string' && schema.description.trim() !== '') return true
    const ref = schema.$ref
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      return described(schemas[ref.slice('#/components/schemas/'.length)])
    }
    return false
  }
  const missing = new Set<string>()
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        walk(item, `${path}/${i}`)
      })
      return
    }
    if (!isObject(value)) return
    const properties = value.properties
    if (isObject(properties) && value.type === 'object') {
      for (const [name, property] of Object.entries(properties)) {
        if (!described(property)) missing.add(`${path}/properties/${name}`)
      }
    }
    for (const [key, item] of Object.entries(value)) {
      if (key === 'example' || key === 'examples') continue
      walk(item, `${path}/${key}`)
    }
  }
  walk(document.paths, '#/paths')
  walk(schemas, '#/components/schemas')
  return [...missing]
}
