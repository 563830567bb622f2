import type { TurnResponse } from '../../contract/api.ts'
import type { EngineState, OpenTurn } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { PlanApprovalRequest } from '../../contract/plan-approval.ts'
import { ZERO_USAGE } from '../../contract/usage.ts'
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
import { planHandoffRequest, renderHandoffPrompt } from './handoff-prompt.ts'
import { resolvePlanApproval } from './plan-decision.ts'

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
    state.plan_approval = null
    // The decision (and a reset) belong to the planning turn, before any new turn starts.
    writer.dispatcher.emit(resolved.event)
    if (resolved.reset) writer.dispatcher.emit(resolved.reset)
    const { outcome } = resolved
    state.permission_mode = outcome.permissionMode

    if (outcome.kind === 'execute') {
      state.approved_plan = outcome.plan
      if (outcome.freshContext) {
        // The handoff protocol's path: the directive is the session's HandoffRequest (modified
        // files, test results, known issues filled from its log), and the build turn orients
        // afresh (its orientation leaves the handoff out: the directive carries it).
        const handoff = await planHandoff(deps, ref, state, writer.history, outcome, pending?.task)
        const agent = agentState(state)
        agent.handoff = handoff
        agent.orient_pending = 'plan_handoff'
        // Cleared: transcript, continuation, segment and tool-budget state. Kept: the rest.
        writer.replaceHistory([{ role: 'user', content: renderHandoffPrompt(handoff) }])
        state.compaction = null
      } else {
        writer.history.push(outcome.message)
      }
    } else if (outcome.kind === 'revise' && outcome.message) {
      writer.history.push(outcome.message)
    } else {
      // Only the decision is recorded: no model call, no new turn.
      const turnId = resolved.event.turn_id
      return respond(deps, ref, writer, { turnId, status: 'completed', remember: false })
    }
    state.turn_counter += 1
    const open: OpenTurn = {
      turn_id: `turn-${state.turn_counter}`,
      pending_calls: [],
      tools_running: false,
      usage: { ...ZERO_USAGE },
      tool_loops: 0,
    }
    writer.dispatcher.emit({ type: 'turn.started' })
    return driveTurn({
      deps,
      ref,
      lease,
      threadId: snapshot.threadId,
      state,
      writer,
      open,
      options,
      turnStart: writer.history.length - 1,
      ackIntents: [],
    })
  })
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
