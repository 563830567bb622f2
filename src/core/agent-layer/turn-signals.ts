import type { EngineState } from '../../contract/engine-state.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { noteAdvance, noteStall } from '../artifacts/progress.ts'
import { artifactStoreFor } from '../artifacts/workspace-artifacts.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'

/**
 * The progress ledger follows the session's own signals: a failed turn is a stall, the first
 * completed turn after failures an advance. Only a ledger that exists is updated (a session
 * never creates one by failing), and only on these transitions, so a healthy session pays no
 * extra object request. Loop steps and verifiers leave it to their loop or proposer.
 */
export async function noteTurnSignal(
  deps: ServiceDeps,
  ref: SessionRef,
  state: EngineState,
  end: 'completed' | 'failed' | 'other',
  warnings: string[],
): Promise<void> {
  if (end === 'other') return
  state.agent ??= {}
  const agent = state.agent
  if (agent.role === 'verifier' || agent.origin?.kind === 'loop') return
  const streak = agent.stall_streak ?? 0
  if (end === 'completed' && streak === 0) return
  if (end === 'completed') delete agent.stall_streak
  else agent.stall_streak = streak + 1
  const now = new Date(deps.clock.now()).toISOString()
  try {
    await artifactStoreFor(deps, ref.tenant, ref.workspace).updateLedger((ledger) =>
      ledger === undefined
        ? undefined
        : end === 'failed'
          ? noteStall(ledger, ref.sessionId, now)
          : noteAdvance(ledger, ref.sessionId, now),
    )
  } catch (error) {
    if (!isTurnlineError(error)) throw error
    warnings.push(`the progress ledger was not updated: ${error.message}`)
  }
}
