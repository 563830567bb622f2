import { parseEngineState } from '../../contract/engine-state.ts'
import { type ErrorCode, isTurnlineError } from '../../contract/errors.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import type { VerifyRequest } from '../../contract/verification.ts'
import type { SandboxPlacement } from '../../ports/sandbox-placement.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { AdmittedStep } from '../engine/admit-step.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { parseConfig, startSession } from '../session/create-session.ts'
import { endSession } from '../session/end-session.ts'
import { stepTurn } from '../turn/step-turn.ts'
import {
  parseVerdict,
  VERIFIER_INSTRUCTIONS,
  type Verdict,
  verifierTask,
} from './verifier-prompt.ts'

/**
 * The verifier sub-agent: a session of its own (nothing of the proposer's transcript, no
 * orientation, no HTTP or artifact tools, no hooks) whose only tools are the sandbox's read-only
 * ones, placed in the proposer's workspace, in plan mode so that even a write tool would be
 * refused. It gets the change description and the affected files, runs one turn (at most 8
 * model requests) and is completed. No runner, no answer, a failed turn, a model call refused
 * for the tenant's quota: a rejection (fail-closed), never an approval.
 */

/** Model requests a verification may take (VT Code gives its verifier 3 turns). */
export const VERIFIER_MAX_MODEL_REQUESTS = 8

export interface VerifierRun {
  deps: ServiceDeps
  locator: SessionLocator
  proposer: SessionRef
  config: SessionConfig
  request: VerifyRequest
  change: { paths: string[]; deleted: string[]; turnId?: string }
  placement: SandboxPlacement | undefined
  /** The verification's admission: the verifier's turn runs in it. */
  admitted: AdmittedStep
}

/** Long: the verifier sub-agent's session, turn and verdict, in order. */
export async function runVerifier(
  run: VerifierRun,
): Promise<{ verdict: Verdict; sessionId?: string }> {
  const { deps, proposer, request, change } = run
  if (!run.placement) {
    return reject('no sandbox runner is configured, so no verifier can read the files')
  }
  const config = parseConfig({
    workspace: proposer.workspace,
    ...((request.model ?? run.config.model) !== undefined
      ? { model: request.model ?? run.config.model }
      : {}),
    instructions: request.instructions
      ? `${VERIFIER_INSTRUCTIONS}\n\nAlso check:\n${request.instructions}`
      : VERIFIER_INSTRUCTIONS,
    permissions: { mode: 'plan' },
    limits: { max_turns: VERIFIER_MAX_MODEL_REQUESTS },
    harness: {
      orientation_enabled: false,
      artifact_tools: false,
      auto_compaction_enabled: false,
      max_tool_loops: VERIFIER_MAX_MODEL_REQUESTS,
    },
    metadata: { verifies: proposer.sessionId },
  })
  const ref = await startSession(deps, run.locator, proposer.tenant, config, {
    source: 'startup',
    placement: run.placement,
    agent: { role: 'verifier', origin: { kind: 'verifier', session_id: proposer.sessionId } },
  })
  const prompt = verifierTask({
    paths: change.paths,
    deleted: change.deleted,
    description: request.description,
    turnId: change.turnId,
  })
  let verdict: Verdict
  try {
    const turn = await stepTurn(deps, ref, { input: prompt }, {}, run.admitted)
    const state = parseEngineState((await deps.sessions.open(ref)).state)
    verdict =
      turn.status === 'completed'
        ? parseVerdict(state.last_assistant_text ?? undefined)
        : rejected(
            `the verifier did not finish (${turn.status}${state.last_failure ? `: ${state.last_failure}` : ''})`,
          )
  } catch (error) {
    const failed: ErrorCode[] = [
      'model_error',
      'model_not_configured',
      'runner_unavailable',
      'quota_exceeded',
    ]
    if (!isTurnlineError(error, ...failed)) throw error
    verdict = rejected(`the verifier failed: ${error.message}`)
  }
  await endSession(deps, ref, 'complete').catch((error: unknown) => {
    if (!isTurnlineError(error, 'session_completed', 'conflict')) throw error
    // An open or finished verifier session is left as it is; the verdict stands.
  })
  return { verdict, sessionId: ref.sessionId }
}

function rejected(reason: string): Verdict {
  return { approved: false, issues: [`Verification failed: ${reason}.`], reasoning: reason }
}

function reject(reason: string): { verdict: Verdict } {
  return { verdict: rejected(reason) }
}
