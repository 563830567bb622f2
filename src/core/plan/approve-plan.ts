import type { TurnResponse } from '../../contract/api.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { PlanApprovalRequest } from '../../contract/plan-approval.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { respond } from '../engine/respond.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { completedError } from '../engine/turn-replay.ts'
import { TurnWriter } from '../engine/turn-writer.ts'
import { withLease } from '../engine/with-lease.ts'
import { writableState } from '../engine/writable-state.ts'
import { sessionHandoff } from '../handoff/handoff-step.ts'
import { agentState } from '../orientation/orient-step.ts'
import type { TurnOptions } from '../session-api.ts'
import { driveTurn } from '../turn/drive-turn.ts'
import { applySessionTransition, TurnMachine } from '../turn/turn-machine.ts'
import { planHandoffRequest, renderHandoffPrompt } from './handoff-prompt.ts'
import { type ResolvedPlanApproval, resolvePlanApproval } from './plan-decision.ts'

/**
 * `POST …/plan-approval {decision}`: records `plan.approval.resolved` under the planning turn's
 * id (as VT Code does), then acts on it. Executing
 * decisions switch the permission mode and run the build turn at once (`fresh_context` first
 * emits `context.reset` and replaces the transcript with the handoff directive, keeping the
 * plan, config, permissions and aggregate usage); `revise` with feedback runs another planning
 * turn; `revise` without feedback and `cancel` only record the decision (no new turn).
 */
export async function approvePlan(
  deps: ServiceDeps,
  ref: SessionRef,
  request: PlanApprovalRequest,
  options: TurnOptions = {},
): Promise<TurnResponse> {
  return withLease(deps, ref, undefined, 'admit', async (lease, snapshot) => {
    if (snapshot.status === 'completed') throw completedError(ref)
    const state = writableState(snapshot)
    const pending = state.plan_approval ?? undefined
    const writer = new TurnWriter(deps, ref, snapshot, state, undefined, options.onEvent)
    const resolved = resolvePlanApproval(pending, request, {
      threadId: snapshot.threadId,
      resumeMode: state.config.permissions.mode === 'default' ? 'default' : 'auto',
      contextTokens: contextTokens(state, writer.history),
      maxContextTokens: state.config.harness.max_context_tokens,
    })
    // The decision (and a reset) belong to the planning turn, before any new turn starts.
    writer.dispatcher.emit(resolved.event)
    if (resolved.reset) writer.dispatcher.emit(resolved.reset)
    const { outcome } = resolved
    const execute = outcome.kind === 'execute' ? outcome : undefined
    applySessionTransition(state, {
      type: 'plan_decided',
      permissionMode: outcome.permissionMode,
      approvedPlan: execute?.plan,
      freshContext: execute?.freshContext,
    })
    if (execute?.freshContext) {
      await handOffToFreshContext({ deps, ref, writer, outcome: execute, task: pending?.task })
    } else if (outcome.kind !== 'cancel' && outcome.message) {
      writer.history.push(outcome.message)
    } else {
      // Only the decision is recorded: no model call, no new turn.
      const turnId = resolved.event.turn_id
      return respond(deps, ref, writer, { turnId, status: 'completed', remember: false })
    }
    const turn = TurnMachine.opening(state)
    writer.dispatcher.emit({ type: 'turn.started' })
    return driveTurn({
      deps,
      ref,
      lease,
      threadId: snapshot.threadId,
      turn,
      writer,
      options,
      turnStart: writer.history.length - 1,
      ackIntents: [],
    })
  })
}

/**
 * The handoff protocol's path: the directive is the session's HandoffRequest (modified files,
 * test results, known issues filled from its log), and the build turn orients afresh (its
 * orientation leaves the handoff out: the directive carries it). Cleared: transcript,
 * continuation, segment and tool-budget state. Kept: the rest.
 */
async function handOffToFreshContext(input: {
  deps: ServiceDeps
  ref: SessionRef
  writer: TurnWriter
  outcome: Extract<ResolvedPlanApproval['outcome'], { kind: 'execute' }>
  task: string | undefined
}): Promise<void> {
  const { deps, ref, writer, outcome } = input
  const { state, history } = writer
  const handoff = await planHandoff(deps, ref, state, history, outcome, input.task)
  const agent = agentState(state)
  agent.handoff = handoff
  agent.orient_pending = 'plan_handoff'
  writer.replaceHistory([{ role: 'user', content: renderHandoffPrompt(handoff) }])
}

/** The last request's prompt tokens when the provider reported them, else an estimate. */
function contextTokens(state: EngineState, history: readonly { content: string }[]): number {
  const anchor = state.compaction?.usage_anchor?.input_tokens
  if (anchor !== undefined) return anchor
  return Math.ceil(history.reduce((sum, m) => sum + m.content.length, 0) / 4)
}

/** The plan → build HandoffRequest, through the same builder as every handoff. */
async function planHandoff(
  deps: ServiceDeps,
  ref: SessionRef,
  state: EngineState,
  history: readonly HistoryMessage[],
  outcome: { targetAgent: 'build' | 'auto'; plan: string },
  task: string | undefined,
) {
  const planned = planHandoffRequest({
    plan: outcome.plan,
    targetAgent: outcome.targetAgent,
    ...(task !== undefined ? { task } : {}),
  })
  return sessionHandoff({
    deps,
    ref,
    state,
    history,
    targetAgent: outcome.targetAgent,
    plan: outcome.plan,
    overrides: {
      state_summary: planned.state_summary,
      task_context: planned.task_context,
      next_actions: planned.next_actions,
    },
    warnings: [],
  })
}
