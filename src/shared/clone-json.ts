/**
 * A deep copy of a JSON value (plain objects, arrays, strings, numbers, booleans, null; a key
 * whose value is undefined is kept, as structuredClone keeps it). For the engine state copied on
 * every commit and turn: 5–10× cheaper than structuredClone, whose serialiser round trip costs
 * more than the copy on a small object.
 */
export function cloneJson<T>(value: T): T {
  return copy(value) as T
}

function copy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(copy)
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key])
  return out
}
