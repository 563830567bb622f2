/**
 * The JSON object `text` holds, or undefined when it holds anything else (not JSON, an array, a
 * string or number). Text that does not start with `{` is not parsed at all.
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}
