import { type LinearRegex, linearRegex } from '../../shared/linear-regex.ts'

/**
 * A hook's `matcher` (VT Code semantics): empty or `*` matches everything; anything else is a
 * regular expression that must match the whole subject (`^(?:matcher)$`), so a plain name is an
 * exact match and `Write|Edit`, `mcp__github__.*` work as expected. Events without a subject
 * (`stop`) match every hook. The session's tenant writes the matcher and names the tools it is
 * matched against, so it runs on the linear-time engine (src/shared/linear-regex.ts), never on
 * JavaScript's backtracking one; without a step budget, as a subject is a name (at most
 * `mcp__<64>__<64>`): at most the pattern's 20,000 steps for each of its characters.
 */
const UNBOUNDED = { steps: Number.POSITIVE_INFINITY }
const cache = new Map<string, LinearRegex | null>()

export function hookMatches(matcher: string | undefined, subject: string | undefined): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*' || subject === undefined) {
    return true
  }
  let regex = cache.get(matcher)
  if (regex === undefined) {
    try {
      regex = linearRegex(`^(?:${matcher})$`)
    } catch {
      regex = null
    }
    if (cache.size > 1000) cache.clear()
    cache.set(matcher, regex)
  }
  // A matcher the linear-time engine cannot run, stored before new ones had to suit it
  // (contract/hook-config.ts), matches everything: a guard still runs, never on backtracking.
  return regex === null || regex.exec(subject, UNBOUNDED) !== undefined
}
