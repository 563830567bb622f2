/**
 * A hook's `matcher` (VT Code semantics): empty or `*` matches everything; anything else is a
 * regular expression that must match the whole subject (`^(?:matcher)$`), so a plain name is an
 * exact match and `Write|Edit`, `mcp__github__.*` work as expected. Events without a subject
 * (`stop`) match every hook.
 */
const cache = new Map<string, RegExp | null>()

export function hookMatches(matcher: string | undefined, subject: string | undefined): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*' || subject === undefined) {
    return true
  }
  let regex = cache.get(matcher)
  if (regex === undefined) {
    try {
      regex = new RegExp(`^(?:${matcher})$`)
    } catch {
      regex = null
    }
    if (cache.size > 1000) cache.clear()
    cache.set(matcher, regex)
  }
  return regex?.test(subject) ?? false
}
