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
  if (/^\*+$/.test(pattern)) return () => true
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, '\\$&'))
    .join('.*')
  const regex = new RegExp(`^${source}$`, 's')
  return (name) => regex.test(name)
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
