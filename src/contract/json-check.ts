import { TurnlineError } from './errors.ts'

/**
 * The check `z.record(z.string(), z.json())` makes, without building a parsed copy: `value` is a
 * plain object whose members are JSON values all the way down (strings, finite numbers,
 * booleans, null, arrays and plain objects of them; no undefined). A writer's fault otherwise:
 * TurnlineError('internal'). For documents the engine builds from typed values on every commit,
 * where a zod parse would copy the whole tree only to find it valid.
 */
export function assertJsonObject(value: unknown, what: string): void {
  if (!isPlainObject(value)) {
    throw new TurnlineError('internal', `cannot write ${what}: not a JSON object`)
  }
  const at: (string | number)[] = []
  const problem = firstProblem(value, at)
  if (problem !== undefined) {
    const path = at.map((step) => `/${step}`).join('') || '/'
    throw new TurnlineError('internal', `cannot write ${what}: ${path}: ${problem}`)
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * What the first non-JSON value is, or undefined when all is JSON; `at` is left holding the steps
 * (array indexes, object keys) to it. The path is written only for a problem found, not for every
 * value checked.
 */
function firstProblem(value: unknown, at: (string | number)[]): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      return Number.isFinite(value) ? undefined : `${value} is not a JSON number`
    case 'object': {
      if (value === null) return undefined
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          at.push(i)
          const problem = firstProblem(value[i], at)
          if (problem !== undefined) return problem
          at.pop()
        }
        return undefined
      }
      if (!isPlainObject(value)) return 'not a plain object'
      for (const key of Object.keys(value)) {
        at.push(key)
        const problem = firstProblem(value[key], at)
        if (problem !== undefined) return problem
        at.pop()
      }
      return undefined
    }
    default:
      return `${typeof value} is not a JSON value`
  }
}
