import type { Clock } from '../../ports/clock.ts'
import { operatorLogLine } from '../../shared/operator-log-line.ts'

export type LogEntry = Record<string, unknown>

/**
 * Where the service's maintenance failures and warnings go: the sink it is given (`deps.log`),
 * else one operator log line on stderr (console.warn on every runtime) — `{"ts", "level":"warn",
 * "msg", …}` as docs/configuration.md#operator-log has every line, never an object printed by
 * the runtime's own formatting. An entry's own `level` stands.
 */
export function serviceLog(deps: {
  log?: ((entry: LogEntry) => void) | undefined
  clock: Clock
}): (entry: LogEntry) => void {
  if (deps.log) return deps.log
  const { clock } = deps
  return (entry) => console.warn(operatorLogLine(entry, { nowMs: clock.now(), level: 'warn' }))
}
