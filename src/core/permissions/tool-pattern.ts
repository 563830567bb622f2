/**
 * Tool-name patterns of `permissions.allow` / `permissions.deny`. Grammar (case-sensitive):
 *
 * | pattern            | matches                                                          |
 * |--------------------|------------------------------------------------------------------|
 * | `lookup`           | exactly the tool `lookup`                                        |
 * | `*`                | every tool                                                       |
 * | `git_*`, `*_read`, `fs_*_file` | `*` stands for any run of characters (also none); every other character is literal |
 * | `mcp__github`      | the MCP server form: `mcp__github` itself and every `mcp__github__<tool>` |
 * | `mcp__github__*`   | every tool of the MCP server `github` (a glob, as above)         |
 *
 * The MCP server form is a pattern `mcp__<server>` without `*` and without a further `__`. No
 * other character is special (`?`, `[`, `.`, `(` are literal), so patterns never need escaping.
 */
export type ToolPattern = (toolName: string) => boolean

const MCP_SERVER = /^mcp__[^*]+$/

/** Compiles one pattern into a predicate over tool names. */
export function compileToolPattern(pattern: string): ToolPattern {
  if (!pattern.includes('*')) {
    if (MCP_SERVER.test(pattern) && !pattern.slice('mcp__'.length).includes('__')) {
      const prefix = `${pattern}__`
      return (name) => name === pattern || (name.startsWith(prefix) && name.length > prefix.length)
    }
    return (name) => name === pattern
  }
  const parts = pattern.split('*')
  return (name) => globMatch(parts, name)
}

/**
 * Whether `name` is the literal parts in order with any run of characters between them (the
 * parts of a pattern split at `*`, so at least two). The first part is a prefix, the last a
 * suffix, and each middle part is taken at its first occurrence after the previous one — which
 * finds a match whenever there is one — so the work is at most name × pattern length. (A regular
 * expression `^a.*a.*…$` backtracks exponentially in the number of stars: six stars against a
 * 60-character name took 12 s.)
 */
function globMatch(parts: readonly string[], name: string): boolean {
  const first = parts[0] ?? ''
  const last = parts.at(-1) ?? ''
  if (name.length < first.length + last.length) return false
  if (!name.startsWith(first) || !name.endsWith(last)) return false
  const end = name.length - last.length
  let at = first.length
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] as string
    const found = name.indexOf(part, at)
    if (found < 0 || found + part.length > end) return false
    at = found + part.length
  }
  return true
}

/** The first pattern of `patterns` that matches `toolName`, if any. */
export function firstMatch(
  patterns: readonly string[],
  compiled: readonly ToolPattern[],
  toolName: string,
): string | undefined {
  for (let i = 0; i < compiled.length; i++) {
    if (compiled[i]?.(toolName)) return patterns[i]
  }
  return undefined
}
