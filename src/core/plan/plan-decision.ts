import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { PlanApprovalResolvedEvent } from '../../contract/permission-and-plan-events.ts'
import type { PendingPlanApproval, PlanApprovalRequest } from '../../contract/plan-approval.ts'
import type { ContextResetEvent } from '../../contract/thread-lifecycle-events.ts'
import { contextResetEvent } from './fresh-context.ts'
import { freshContextDirective } from './handoff-prompt.ts'

/**
 * What each `plan.approval.resolved` decision does (VT Code planning workflow):
 *
 * | decision       | agent | permissions mode after | context | model is told            |
 * |----------------|-------|------------------------|---------|--------------------------|
 * | `execute`      | build | the pre-plan mode      | kept    | execution directive      |
 * | `auto_accept`  | build | `auto`                 | kept    | execution directive      |
 * | `fresh_context`| build | the pre-plan mode      | reset   | handoff directive only   |
 * | `switch_build` | build | `default`              | kept    | execution directive      |
 * | `switch_auto`  | auto  | `auto`                 | kept    | execution directive      |
 * | `revise`       | plan  | `plan`                 | kept    | the feedback, if any     |
 * | `cancel`       | plan  | `plan`                 | kept    | nothing; plan discarded  |
 *
 * "Pre-plan mode" is the confirmation policy the session had before planning (`default` asks,
 * `auto` does not); VT Code keeps it for `execute`/`fresh_context` and forces it for the others.
 */

export type ExecutionMode = 'default' | 'auto'

export type PlanApprovalOutcome =
  | {
      kind: 'execute'
      targetAgent: 'build' | 'auto'
      permissionMode: ExecutionMode
      /** True for `fresh_context`: apply the reset (fresh-context.ts) before the build turn. */
      freshContext: boolean
      /** Append to the transcript (after the reset, it is the transcript). */
      message: HistoryMessage
      /** The approved plan, preserved in the state. */
      plan: string
    }
  | { kind: 'revise'; permissionMode: 'plan'; message?: HistoryMessage }
  | { kind: 'cancel'; permissionMode: 'plan' }

export interface PlanApprovalContext {
  threadId: string
  /** True when a policy decided rather than a person. */
  automatic?: boolean
  /** The permissions mode before planning; `default` when unknown. */
  resumeMode?: ExecutionMode
  /** For `context.reset`: the last model request's prompt tokens and `max_context_tokens`. */
  contextTokens: number
  maxContextTokens: number
}

export interface ResolvedPlanApproval {
  event: PlanApprovalResolvedEvent
  outcome: PlanApprovalOutcome
  /** `fresh_context` only, emitted right after `event`. */
  reset?: ContextResetEvent
}

/**
 * Applies `POST …/plan-approval` to the waiting plan; 409 when no plan waits.
 * Long: one decision table over the approval's outcomes.
 */
export function resolvePlanApproval(
  pending: PendingPlanApproval | undefined,
  request: PlanApprovalRequest,
  ctx: PlanApprovalContext,
): ResolvedPlanApproval {
  if (!pending) {
    throw new TurnlineError('conflict', 'no plan is waiting for approval', { retryable: false })
  }
  const event: PlanApprovalResolvedEvent = {
    type: 'plan.approval.resolved',
    thread_id: ctx.threadId,
    // VT Code records the decision (and a reset) under the planning turn's id.
    turn_id: pending.turn_id,
    decision: request.decision,
    automatic: ctx.automatic ?? false,
  }
  const resume = ctx.resumeMode ?? 'default'
  const plan = pending.plan
  switch (request.decision) {
    case 'execute':
      return { event, outcome: execute('build', resume, plan, 'execute') }
    case 'auto_accept':
      return { event, outcome: execute('build', 'auto', plan, 'auto_accept') }
    case 'switch_build':
      return { event, outcome: execute('build', 'default', plan, 'switch_build') }
    case 'switch_auto':
      return { event, outcome: execute('auto', 'auto', plan, 'switch_auto') }
    case 'fresh_context':
      return {
        event,
        outcome: {
          kind: 'execute',
          targetAgent: 'build',
          permissionMode: resume,
          freshContext: true,
          plan,
          message: freshContextDirective({
            plan,
            targetAgent: 'build',
            ...(pending.task !== undefined ? { task: pending.task } : {}),
          }),
        },
        reset: contextResetEvent({
          threadId: ctx.threadId,
          turnId: pending.turn_id,
          contextTokens: ctx.contextTokens,
          maxContextTokens: ctx.maxContextTokens,
        }),
      }
    case 'revise':
      return {
        event,
        outcome: {
          kind: 'revise',
          permissionMode: 'plan',
          ...(request.feedback !== undefined
            ? {
                message: {
                  role: 'user',
                  content: `Revise the plan before anything is implemented:\n${request.feedback}`,
                },
              }
            : {}),
        },
      }
    case 'cancel':
      return { event, outcome: { kind: 'cancel', permissionMode: 'plan' } }
  }
}

function execute(
  targetAgent: 'build' | 'auto',
  permissionMode: ExecutionMode,
  plan: string,
  decision: string,
): PlanApprovalOutcome {
  const confirmations =
    permissionMode === 'auto'
      ? 'Tool calls run without confirmation.'
      : 'Tool calls outside the allow list need approval.'
  return {
    kind: 'execute',
    targetAgent,
    permissionMode,
    freshContext: false,
    plan,
    message: {
      role: 'user',
      content:
        `The plan was approved (${decision}). Planning is over and tools that change state are ` +
        `available again. ${confirmations} Implement the approved plan now, step by step, ` +
        'verifying each step as the plan says.',
    },
  }
}
