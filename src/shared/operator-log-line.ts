/**
 * An entry stamped as every operator log line is (docs/configuration.md#operator-log): `ts`
 * first, then `level` when one is given (an entry's own `level` stands), then its fields.
 */
export function stampedEntry(
  entry: Record<string, unknown>,
  options: { nowMs?: number; level?: string } = {},
): Record<string, unknown> {
  const ts = new Date(options.nowMs ?? Date.now()).toISOString()
  return { ts, ...(options.level === undefined ? {} : { level: options.level }), ...entry }
}

/** That entry as the one JSON line the log holds (without its newline). */
export function operatorLogLine(
  entry: Record<string, unknown>,
  options?: { nowMs?: number; level?: string },
): string {
  return JSON.stringify(stampedEntry(entry, options))
}
