import { type LinearRegex, LinearRegexError, linearRegex } from '../../shared/linear-regex.ts'

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

/** A surrogate code unit: there `u`-mode matching (code points) and the linear engine's differ. */
const SURROGATE = /[\uD800-\uDFFF]/
/** Matches no string at all. */
const NOTHING = '[^\\s\\S]'
/**
 * Characters the patterns of one call may read together (each pattern reads every subject once);
 * past it a pattern is left out. Without it the work was the number of patterns times the size of
 * the arguments, both steered by the tenant or the model, and each pattern's literal list (which
 * JavaScript's engine then tests every subject against) as long as the arguments.
 */
export const PATTERN_SCAN_LIMIT = 256 * 1024

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The strings anywhere in `value` and its property names, which go to both: `propertyNames`
 * may hold a `pattern`.
 */
function collect(value: unknown, strings: Set<string>, names: Set<string>): void {
  if (typeof value === 'string') strings.add(value)
  else if (Array.isArray(value)) for (const item of value) collect(item, strings, names)
  else if (isObject(value)) {
    for (const [name, item] of Object.entries(value)) {
      names.add(name)
      strings.add(name)
      collect(item, strings, names)
    }
  }
}

/** The pattern compiled by the linear engine, or undefined where it refuses it (or `u` differs). */
function compiled(pattern: unknown): LinearRegex | undefined {
  if (typeof pattern !== 'string' || SURROGATE.test(pattern)) return undefined
  try {
    return linearRegex(pattern)
  } catch (error) {
    if (error instanceof LinearRegexError) return undefined
    throw error
  }
}

/** Whether `regex` finds a match in `subject`; undefined when the search outgrew its budget. */
function found(regex: LinearRegex, subject: string): boolean | undefined {
  try {
    return regex.exec(subject) !== undefined
  } catch (error) {
    if (error instanceof LinearRegexError) return undefined
    throw error
  }
}

const literal = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')

/** A pattern matching exactly the given strings, which JavaScript's engine runs without backtracking. */
const exactly = (texts: string[]) =>
  texts.length === 0 ? NOTHING : `^(?:${texts.map(literal).join('|')})$`

/**
 * A copy of a tool's JSON Schema for checking `value`, the model's arguments, whose regular
 * expressions (`pattern`, the names of `patternProperties`) the validator can run safely. The
 * schema is a tenant's or an MCP server's and the arguments the model's, which either may steer:
 * JavaScript's engine backtracks (`^(a+)+$` against 28 characters: 1.6 s, doubling with each
 * character more, in the process every tenant shares). So each pattern is run here, by the
 * linear engine (src/shared/linear-regex.ts), against the strings (or the property names) of
 * `value`, and replaced by the literal list of those it matches — what the validator sees of
 * the pattern is the same for this value. A pattern the linear engine refuses (back-references,
 * lookarounds), that holds a character outside the BMP or that would read past what is left of
 * {@link PATTERN_SCAN_LIMIT} is left out, as is a search that
 * outgrows its budget (the string counts as matching) or a subject with a surrogate (where the
 * `u` flag's code points and the engine's code units could differ); where a `patternProperties`
 * name is left out, that schema's `additionalProperties` and `unevaluatedProperties` go too, so
 * a property the pattern allowed is not refused. A property named `pattern` is a property.
 * `perValue`: the linear engine took a pattern, so the copy depends on the value and serves it
 * alone.
 */
export function schemaForArguments(
  schema: unknown,
  value: unknown,
): { schema: unknown; perValue: boolean } {
  const context: Context = {
    strings: new Set(),
    names: new Set(),
    perValue: false,
    scanLeft: PATTERN_SCAN_LIMIT,
  }
  collect(value, context.strings, context.names)
  const copy = rewrite(schema, context)
  return { schema: copy, perValue: context.perValue }
}

interface Context {
  strings: Set<string>
  names: Set<string>
  /** Whether the linear engine took a pattern. */
  perValue: boolean
  /** What is left of {@link PATTERN_SCAN_LIMIT}. */
  scanLeft: number
}

/**
 * The subjects `pattern` matches; undefined where it is left out. `lenient`: a subject the
 * engine cannot decide (a surrogate, a search over budget) counts as matching, else the pattern
 * is left out.
 */
function matching(
  context: Context,
  pattern: unknown,
  subjects: Set<string>,
  options: { lenient: boolean },
): string[] | undefined {
  const regex = compiled(pattern)
  if (!regex) return undefined
  let size = 0
  for (const subject of subjects) size += subject.length + 1
  if (size > context.scanLeft) return undefined
  context.scanLeft -= size
  context.perValue = true
  const kept: string[] = []
  for (const subject of subjects) {
    const match = SURROGATE.test(subject) ? undefined : found(regex, subject)
    if (match === undefined && !options.lenient) return undefined
    if (match !== false) kept.push(subject)
  }
  return kept
}

/** `patternProperties` rewritten; `loosened` when a name was left out. */
function rewriteNames(
  item: Record<string, unknown>,
  context: Context,
): { rewritten: Record<string, unknown>; loosened: boolean } {
  const rewritten: Record<string, unknown> = {}
  let loosened = false
  let index = 0
  for (const [pattern, sub] of Object.entries(item)) {
    const kept = matching(context, pattern, context.names, { lenient: false })
    if (!kept) {
      loosened = true
      continue
    }
    // `(?:)` repeated keeps two patterns that match the same names apart.
    rewritten[`${'(?:)'.repeat(index++)}${exactly(kept)}`] = rewrite(sub, context)
  }
  return { rewritten, loosened }
}

function rewrite(node: unknown, context: Context): unknown {
  if (!isObject(node)) return node
  const walk = (sub: unknown) => rewrite(sub, context)
  const copy: Record<string, unknown> = {}
  let loosened = false
  for (const [key, item] of Object.entries(node)) {
    if (key === 'pattern') {
      const kept = matching(context, item, context.strings, { lenient: true })
      if (kept) copy.pattern = exactly(kept)
    } else if (key === 'patternProperties') {
      if (!isObject(item)) {
        loosened = true
        continue
      }
      const names = rewriteNames(item, context)
      copy.patternProperties = names.rewritten
      loosened ||= names.loosened
    } else if (ONE.has(key)) {
      copy[key] = Array.isArray(item) ? item.map(walk) : walk(item)
    } else if (LIST.has(key) && Array.isArray(item)) {
      copy[key] = item.map(walk)
    } else if (MAP.has(key) && isObject(item)) {
      copy[key] = Object.fromEntries(Object.entries(item).map(([name, sub]) => [name, walk(sub)]))
    } else {
      copy[key] = item
    }
  }
  if (loosened) {
    delete copy.additionalProperties
    delete copy.unevaluatedProperties
  }
  return copy
}
