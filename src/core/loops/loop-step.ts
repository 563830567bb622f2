import { parseEngineState } from '../../contract/engine-state.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { LoopRunState, LoopStepRecord } from '../../contract/loop-state.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { truncateText } from '../orientation/artifact-summaries.ts'
import { startSession } from '../session/create-session.ts'
import { endSession } from '../session/end-session.ts'
import type { InvocationTimeLeft } from '../turn/invocation-deadline.ts'
import { stepTurn } from '../turn/step-turn.ts'
import { stepConfig } from './loop-accounting.ts'

/**
 * One loop step: a fresh session (id `<loop>-step-<n>`, created once) that orients from the
 * workspace's artifacts, runs one turn with the task (Idempotency-Key `loop-step/<session>`, a
 * key no caller can send) and is completed. Every part is safe to repeat: a step interrupted anywhere is resumed by the next
 * call — an existing session is reused, an open turn continued, a finished one completed — and
 * never runs the task twice. All steps share one sandbox workspace (`loop-<id>`), so the
 * working tree carries over from step to step.
 */

export type StepOutcome =
  | { kind: 'done'; record: LoopStepRecord }
  | { kind: 'waiting'; status: string; warnings?: string[] }

export interface StepInput {
  deps: ServiceDeps
  locator: SessionLocator
  tenant: string
  state: LoopRunState
  claim: { index: number; session_id: string; started_at: string }
  input?: string | undefined
  /** Run in a request the platform bounds (Lambda): the step's turn pauses before its end. */
  timeLeft?: InvocationTimeLeft | undefined
}

/** Long: one loop step's sequence under its run state's compare-and-swap. */
export async function runLoopStep(step: StepInput): Promise<StepOutcome> {
  const { deps, locator, tenant, state, claim } = step
  const ref: SessionRef = { tenant, workspace: state.workspace, sessionId: claim.session_id }
  try {
    await startSession(deps, locator, tenant, stepConfig(state), {
      source: 'startup',
      sessionId: claim.session_id,
      agent: { origin: { kind: 'loop', loop_id: state.loop_id, step_index: claim.index } },
      timeLeft: step.timeLeft,
      ...(deps.sandbox ? { placement: { sessionId: `loop-${state.loop_id}`, baseDir: '.' } } : {}),
    })
  } catch (error) {
    // The step was started before (a retry, or a crash after the start): continue it.
    if (!isTurnlineError(error, 'conflict')) throw error
  }
  const before = await deps.sessions.open(ref)
  if (before.status !== 'completed') {
    const current = parseEngineState(before.state)
    const prompt = step.input ? `${state.task}\n\n${step.input}` : state.task
    const timed = step.timeLeft ? { timeLeft: step.timeLeft } : {}
    const turn = current.open_turn
      ? await stepTurn(deps, ref, {}, timed)
      : current.turn_counter === 0
        ? await stepTurn(
            deps,
            ref,
            { input: prompt },
            { idempotencyKey: `loop-step/${claim.session_id}`, ...timed },
          )
        : undefined
    if (turn && (turn.status === 'waiting' || turn.status === 'awaiting_approval')) {
      // Paused before the platform's timeout (a `paused:` warning): the next step call goes on.
      const warnings = turn.warnings?.length ? { warnings: turn.warnings } : {}
      return { kind: 'waiting', status: turn.status, ...warnings }
    }
    if (turn?.status !== 'terminal') {
      await endSession(deps, ref, 'complete', {
        idempotencyKey: `loop-complete/${claim.session_id}`,
      }).catch((error: unknown) => {
        if (!isTurnlineError(error, 'session_completed')) throw error
      })
    }
  }
  const after = await deps.sessions.open(ref)
  const final = parseEngineState(after.state)
  const tail = await deps.sessions.readEvents(ref, Math.max(0, after.nextSeq - 8), 8)
  const completed = tail.events
    .map((e) => e.line.event as ThreadEvent)
    .findLast((e) => e.type === 'thread.completed')
  const subtype =
    completed?.type === 'thread.completed' ? completed.subtype : 'error_during_execution'
  const result = completed?.type === 'thread.completed' ? completed.result : undefined
  return {
    kind: 'done',
    record: {
      index: claim.index,
      session_id: claim.session_id,
      subtype,
      outcome_code: completed?.type === 'thread.completed' ? completed.outcome_code : 'unknown',
      input_tokens: final.usage.input_tokens,
      output_tokens: final.usage.output_tokens,
      cost_usd: final.cost_usd ?? null,
      started_at: claim.started_at,
      ended_at: new Date(deps.clock.now()).toISOString(),
      ...(result ? { result: truncateText(result, 1000) } : {}),
    },
  }
}
