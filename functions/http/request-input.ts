import type * as z from 'zod'
import { TurnlineError } from '../../src/contract/errors.ts'

/** Validation of everything a request carries besides its body: path, query, headers. */

const MAX_ISSUES = 10

function pathText(path: readonly PropertyKey[], root: string): string {
  let text = root
  for (const step of path) {
    text += typeof step === 'number' ? `[${step}]` : `.${String(step)}`
  }
  return text
}

type Issue = z.core.$ZodIssue

/** How far into the value an issue got: a branch that failed deeper matched the value better. */
const depth = (issues: readonly Issue[]) => Math.max(-1, ...issues.map((i) => i.path.length))

/**
 * A union that matched no branch says only "Invalid input"; the branch that got furthest into
 * the value (ignoring branches of another type) tells what is wrong, with its own message.
 */
function explained(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue]
  const branches = issue.errors.filter(
    (branch) => !(branch.length === 1 && branch[0]?.code === 'invalid_type' && depth(branch) === 0),
  )
  const best = branches.reduce<readonly Issue[] | undefined>(
    (chosen, branch) => (chosen === undefined || depth(branch) > depth(chosen) ? branch : chosen),
    undefined,
  )
  if (best === undefined) return [issue]
  return best.flatMap((inner) =>
    explained({ ...inner, path: [...issue.path, ...inner.path] } as Issue),
  )
}

/** One line per zod issue, naming the field (`body.tools[0].url: Invalid URL`). */
export function describeIssues(
  error: z.ZodError,
  root: string,
): { message: string; issues: object[] } {
  const all = error.issues.flatMap(explained)
  const issues = all.slice(0, MAX_ISSUES).map((issue) => {
    const field = pathText(issue.path, root)
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((key) => JSON.stringify(key.slice(0, 80))).join(', ')
      return { field, message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}` }
    }
    return { field, message: issue.message }
  })
  const more = all.length > MAX_ISSUES ? ` (and ${all.length - MAX_ISSUES} more)` : ''
  return {
    message: issues.map((i) => `${i.field}: ${i.message}`).join('; ') + more,
    issues,
  }
}

/** Parses `value` with `schema`, or throws invalid_input naming every bad field. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  root: string,
): z.output<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const { message, issues } = describeIssues(result.error, root)
  throw new TurnlineError('invalid_input', message, { details: { issues } })
}

/** The query string as an object; a parameter given twice is an error, not a silent pick. */
export function queryObject(url: string): Record<string, string> {
  const params = new URL(url).searchParams
  const query: Record<string, string> = {}
  for (const [key, value] of params) {
    if (Object.hasOwn(query, key)) {
      throw new TurnlineError(
        'invalid_input',
        `query parameter ${JSON.stringify(key.slice(0, 80))} is given more than once`,
        {
          details: { field: `query.${key.slice(0, 80)}` },
        },
      )
    }
    query[key] = value
  }
  return query
}

/** For routes without query parameters: any parameter is an unknown field. */
export function rejectQuery(url: string): void {
  const [key] = Object.keys(queryObject(url))
  if (key !== undefined) {
    throw new TurnlineError(
      'invalid_input',
      `unknown query parameter ${JSON.stringify(key.slice(0, 80))}`,
      {
        details: { field: `query.${key.slice(0, 80)}` },
      },
    )
  }
}

export function parseQuery<S extends z.ZodType>(schema: S, url: string): z.output<S> {
  return parseInput(schema, queryObject(url), 'query')
}

/* Path parameters and headers are checked by their schemas in src/contract/route-params.ts. */

/**
 * True when the client asks for Server-Sent Events: `text/event-stream` is among its Accept
 * media ranges with a non-zero quality. Anything else gets the route's default format.
 */
export function wantsEventStream(accept: string | undefined): boolean {
  if (!accept) return false
  return accept.split(',').some((range) => {
    const [type = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase())
    if (type !== 'text/event-stream') return false
    const q = params.find((p) => p.startsWith('q='))
    return q === undefined || Number(q.slice(2)) > 0
  })
}
