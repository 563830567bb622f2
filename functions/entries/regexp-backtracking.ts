import { setFlagsFromString } from 'node:v8'

/**
 * A session brings regular expressions of its own — hook `matcher`s (matched against tool names
 * it also names) and `harness.test_command_pattern` (against commands its model writes) — and
 * JavaScript's engine backtracks: `(a|a)*b` against a 64-character tool name would hold the
 * process for longer than it lives. V8 can finish such a match with its linear-time engine
 * instead, once a match has backtracked 50,000 times
 * (`--enable-experimental-regexp-engine-on-excessive-backtracks`; the same answer, in time
 * linear in the subject). The Node entries turn it on before they serve; it covers every
 * expression that engine supports (no back-references, lookarounds or case-insensitive
 * matching), the service's own included.
 */
export function limitRegExpBacktracking(): void {
  setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks')
}
