import type { RefusalCode } from '../../src/contract/runner-answers.ts'

/** An expected refusal of the runner, answered as a 4xx `{error:{code,message,details?}}`. */
export class Refusal extends Error {
  override readonly name = 'Refusal'

  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
  }
}

export const REFUSAL_STATUS: Readonly<Record<RefusalCode, number>> = {
  invalid_input: 400,
  path_escape: 400,
  not_found: 404,
  conflict: 409,
  patch_failed: 422,
  payload_too_large: 413,
}
