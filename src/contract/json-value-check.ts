// zod's `util` alone: reading `z.core` as a value keeps core's whole namespace in every bundle
// that has this module, its ≈ 40 locales with it (the zod chunk 280 → 700 KB, parsed at each start).
import { util } from 'zod/v4/core'

/** Nesting deeper than this is left to the runtime parser (whose recursion decides it). */
export const CHECKED_JSON_DEPTH = 64
/** Objects and lists beyond this many in one value are left to the runtime parser too. */
export const CHECKED_JSON_CONTAINERS = 10_000

const { isPlainObject } = util
const isEnumerable = Object.prototype.propertyIsEnumerable

/**
 * Whether `JsonValueSchema`'s runtime parse accepts `value` and returns a value with the same
 * JSON text: strings, finite numbers, booleans, null, arrays of these, and objects zod takes as
 * records (its own `isPlainObject`) whose own keys are all enumerable strings other than
 * `__proto__` (the runtime drops that one, and a symbol key fails it). Walked with a stack of its
 * own, no recursion, so nothing here can overflow.
 *
 * `false` decides nothing: the value is then left to the runtime parser, which accepts or
 * rejects it with its issues. That covers what the runtime may take but this does not — nesting
 * deeper than `CHECKED_JSON_DEPTH` (which the runtime's recursion may refuse with a RangeError),
 * more than `CHECKED_JSON_CONTAINERS` objects and lists (a value sharing a member many times,
 * which would make this walk long), a reference cycle (deeper than any depth), a `__proto__` key,
 * a symbol or non-enumerable key.
 */
export function isCheckedJsonValue(value: unknown): boolean {
  if (isJsonLeaf(value)) return true
  if (!isContainer(value)) return false
  const pending: object[] = [value]
  const depths: number[] = [0]
  let containers = 0
  while (pending.length > 0) {
    const container = pending.pop() as object
    const depth = depths.pop() as number
    if (depth >= CHECKED_JSON_DEPTH || ++containers > CHECKED_JSON_CONTAINERS) return false
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        const member: unknown = container[i]
        if (isJsonLeaf(member)) continue
        if (!isContainer(member)) return false
        pending.push(member)
        depths.push(depth + 1)
      }
      continue
    }
    if (!isPlainObject(container)) return false
    for (const key of Reflect.ownKeys(container)) {
      if (typeof key !== 'string' || key === '__proto__' || !isEnumerable.call(container, key)) {
        return false
      }
      const member: unknown = (container as Record<string, unknown>)[key]
      if (isJsonLeaf(member)) continue
      if (!isContainer(member)) return false
      pending.push(member)
      depths.push(depth + 1)
    }
  }
  return true
}

/** A JSON value with no members: what `z.string()`, `z.number()`, `z.boolean()`, `z.null()` take. */
function isJsonLeaf(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value)
    default:
      return value === null
  }
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}
