import type { RunnerResult } from '../../src/ports/sandbox-runner.ts'

/** The value of a result that must be ok (the refusal in the failure message otherwise). */
export function value<T>(result: RunnerResult<T>): T {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal)}`)
  return result.value
}

/** The refusal of a result that must be refused. */
export function refusal<T>(result: RunnerResult<T>) {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.value)}`)
  return result.refusal
}
