import { operatorLogLine } from '../../src/shared/operator-log-line.ts'

/** What the runner's parts log: `event` names the line, `level` when not `info`. */
export type RunnerLogEntry = Record<string, unknown>

/**
 * One line of the runner's log on stderr, in the operator log's format
 * (docs/configuration.md#operator-log): `{"ts","level","msg","runner":true,…}`, `msg` being
 * the entry's `event` and `level` `info` unless it says otherwise.
 */
export function runnerLogLine(entry: RunnerLogEntry): string {
  const { event, level, ...fields } = entry
  return `${operatorLogLine({ level: level ?? 'info', msg: event, runner: true, ...fields })}\n`
}

/** The runner's log as its process writes it: every line on stderr. */
export const runnerStderrLog = (entry: RunnerLogEntry): void => {
  process.stderr.write(runnerLogLine(entry))
}
