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
  const problem = firstProblem(value, '')
  if (problem !== undefined) {
    throw new TurnlineError('internal', `cannot write ${what}: ${problem}`)
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Where the first non-JSON value is (a path), or undefined when all is JSON. */
function firstProblem(value: unknown, path: string): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      return Number.isFinite(value) ? undefined : `${path || '/'}: ${value} is not a JSON number`
    case 'object': {
      if (value === null) return undefined
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const problem = firstProblem(value[i], `${path}/${i}`)
          if (problem !== undefined) return problem
        }
        return undefined
      }
      if (!isPlainObject(value)) return `${path || '/'}: not a plain object`
      for (const key of Object.keys(value)) {
        const problem = firstProblem(value[key], `${path}/${key}`)
        if (problem !== undefined) return problem
      }
      return undefined
    }
    default:
      return `${path || '/'}: ${typeof value} is not a JSON value`
  }
}
