import type { ThreadCompletedEvent } from '../src/contract/thread-lifecycle-events.ts'

/**
 * Exit codes of `turnline`. `exec` exits with the outcome of the session, one code per
 * `thread.completed` subtype, so scripts can tell a failed run from a limit or a cancellation
 * without parsing the stream. (VT Code's `exec` exits 0 for every finished run and leaves the
 * outcome to `thread.completed`; the subtype is in the stream here too.)
 */
export const EXIT = {
  /** The run ended `success` (and its answer matched `--output-schema`). */
  success: 0,
  /** `error_during_execution`: the run failed (a model, tool or turn failure). */
  error_during_execution: 1,
  /** Bad command line. */
  usage: 2,
  /** `error_max_turns`: `--max-turns` (or the session's limit) was reached. */
  error_max_turns: 3,
  /** `error_max_budget_usd`: `--max-budget-usd` (or the session's budget) was reached. */
  error_max_budget_usd: 4,
  /** `cancelled`: the session was cancelled (by another client). */
  cancelled: 5,
  /** The run succeeded but its final answer does not match `--output-schema`. */
  output_schema_mismatch: 6,
  /** Nothing ran to an outcome: the server was unreachable, refused the request or failed. */
  unavailable: 7,
  /** The turn stopped for a permission or plan decision; the session stays open. */
  awaiting_approval: 8,
  /** Interrupted with Ctrl-C (the session was cancelled). */
  interrupted: 130,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

/** The exit code of a finished session. Unknown future subtypes count as failures. */
export function exitCodeOf(completed: Pick<ThreadCompletedEvent, 'subtype'>): ExitCode {
  switch (completed.subtype) {
    case 'success':
      return EXIT.success
    case 'error_max_turns':
      return EXIT.error_max_turns
    case 'error_max_budget_usd':
      return EXIT.error_max_budget_usd
    case 'cancelled':
      return EXIT.cancelled
    default:
      return EXIT.error_during_execution
  }
}

/** An error that ends the command with a message on stderr and a given exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message)
  }
}
