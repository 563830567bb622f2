import type { UsageCharge } from './tenant-limiter.ts'

/**
 * Admission: the deployment's per-tenant limits as the engine meets them (ServiceDeps.admission;
 * functions/tenancy implements it on the TenantLimiter). The engine asks at two points, and
 * every path that steps a turn or calls a model goes through them (src/core/engine/admit-step.ts
 * and src/core/model/admitted-model.ts are the only callers):
 *
 * - `step`: before a turn-stepping call does any work — today's usage and the holds of calls in
 *   flight below the daily quotas, and a free turn slot, held while the step runs.
 * - `reserve`: before each model call — its estimate held against the daily quotas, atomically
 *   with the check; `settle` replaces the hold by the provider's usage once the call answered.
 *
 * - `keepOutput`: before a tool output's bytes are stored as an output artifact — counted in the
 *   tenant's usage, atomically with the check against its daily limit (src/core/tools/
 *   kept-output.ts asks in steps of a chunk and gives back what an output did not keep).
 *
 * A refusal of a step or a model call is a TurnlineError: 429 `quota_exceeded` or
 * `too_many_concurrent_turns`, with Retry-After; a refused output is the tool's error (a result,
 * not an exception: the turn goes on).
 */
export interface Admission {
  /** Output tokens reserved for a call that sets no `max_output_tokens`. */
  readonly defaultOutputTokens: number
  /** Runs one step of `tenant`'s work once it is admitted, holding its turn slot meanwhile. */
  step<T>(tenant: string, run: () => Promise<T>): Promise<T>
  /** Holds a model call's estimate before the call is made. */
  reserve(tenant: string, call: ModelCallEstimate): Promise<ModelCallHold>
  /**
   * Counts `bytes` more of tool output kept as output artifacts today; when that would pass the
   * tenant's daily limit nothing is counted and the answer says why (words for the model and
   * the user).
   */
  keepOutput(
    tenant: string,
    bytes: number,
  ): Promise<{ kept: true } | { kept: false; reason: string }>
  /** Takes back bytes `keepOutput` counted for output that was not kept after all. Never rejects. */
  returnOutput(tenant: string, bytes: number): Promise<void>
  /**
   * The tenant's own caps on one kept output and on a session's output artifacts, where it has
   * them (`output_bytes_per_output`, `output_bytes_per_session`): the lower of these and the
   * deployment's applies. Absent: the deployment's caps only.
   */
  outputCaps?(tenant: string): { perOutput?: number; perSession?: number }
}

export interface ModelCallEstimate {
  /** Names the call within the tenant: `<session>/<turn>/<step>`; settled once per id. */
  id: string
  /**
   * The call's estimate, worked out when asked: it costs a pass over the request's JSON, which
   * an admission that holds nothing for the tenant (no daily token or cost quota) never needs.
   */
  estimate(): { tokens: number; costMicroUsd: number }
}

export interface ModelCallHold {
  /**
   * Charges what the call used in place of its estimate (counted once per call id). Never
   * rejects: the model was paid for already, so a limiter fault is only logged.
   */
  settle(charge: UsageCharge): Promise<void>
  /** Drops the hold of a call that failed without usage. Never rejects. */
  release(): Promise<void>
}
