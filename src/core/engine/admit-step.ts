import type { ServiceDeps } from './service-deps.ts'

declare const admitted: unique symbol

/**
 * Proof that a step of `tenant` was admitted and holds its turn slot; only `admitStep` makes
 * one. Work done inside the step (an exec run's turn, a loop step's turn, a verifier's turn) is
 * handed it and is not admitted a second time: one slot per step, whatever it calls.
 */
export interface AdmittedStep {
  readonly tenant: string
  readonly [admitted]: true
}

/**
 * The one gate of every turn step (docs/configuration.md#limits): `POST …/turns`, a turn
 * resumed by the runner's callback, permission and plan decisions, manual compaction, exec and
 * responses runs, webhook runs, loop steps, verifications and forks all pass here — `withLease`
 * calls it for every leased step unless the caller is already inside an admitted one or the
 * step only ends a session. The deployment's admission (ServiceDeps.admission) checks the daily
 * quotas and takes a turn slot, held until `run` ends; a refusal throws before anything ran.
 * Each model call inside is reserved on its own (`admitted-model.ts`).
 */
export async function admitStep<T>(
  deps: ServiceDeps,
  tenant: string,
  within: AdmittedStep | undefined,
  run: (step: AdmittedStep) => Promise<T>,
): Promise<T> {
  if (within) {
    if (within.tenant !== tenant) throw new Error('unreachable: a step admitted for another tenant')
    return run(within)
  }
  const step = { tenant } as AdmittedStep
  if (!deps.admission) return run(step)
  return deps.admission.step(tenant, () => run(step))
}
