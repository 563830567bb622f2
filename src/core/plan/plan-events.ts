import type { ThreadEvent } from '../../contract/thread-event.ts'

/**
 * VT Code's plan-ready sequence (planning workflow events):
 *
 * 1. `item.completed` harness `planning_started` ("Planning workflow produced a plan for review.")
 * 2. `item.started` plan item `<turn_id>-plan` with empty text
 * 3. `plan.delta{thread_id, turn_id, item_id, delta}` — the whole plan at once, or one per
 *    streamed chunk
 * 4. `item.completed` plan item with the full text
 * 5. `item.completed` harness `planning_completed` ("Plan is ready for user approval.")
 * 6. `plan.approval.requested{thread_id, turn_id, plan_file?}`
 *
 * The turn then ends `awaiting_approval` until `POST …/plan-approval` (see plan-approval.ts).
 */

export interface PlanEventContext {
  threadId: string
  turnId: string
  /** Where the plan is kept, workspace-relative (e.g. `.vtcode/plans/turn-3.md`), if stored. */
  planFile?: string
  /** Ids for harness items (VT Code: `harness-<…>`); e.g. `() => \`harness-${ids.uuid()}\``. */
  harnessItemId: () => string
}

/** The plan item id of a turn (VT Code `<turn_id>-plan`). */
export function planItemId(turnId: string): string {
  return `${turnId}-plan`
}

/** Steps 1–2: before the first delta. */
export function planStartedEvents(ctx: PlanEventContext): ThreadEvent[] {
  return [
    harness(ctx, 'planning_started', 'Planning workflow produced a plan for review.'),
    { type: 'item.started', item: { id: planItemId(ctx.turnId), type: 'plan', text: '' } },
  ]
}

/** Step 3, once per delta. */
export function planDeltaEvent(ctx: PlanEventContext, delta: string): ThreadEvent {
  return {
    type: 'plan.delta',
    thread_id: ctx.threadId,
    turn_id: ctx.turnId,
    item_id: planItemId(ctx.turnId),
    delta,
  }
}

/** Steps 4–6: the completed plan, then the approval request. */
export function planCompletedEvents(ctx: PlanEventContext, planText: string): ThreadEvent[] {
  return [
    { type: 'item.completed', item: { id: planItemId(ctx.turnId), type: 'plan', text: planText } },
    harness(ctx, 'planning_completed', 'Plan is ready for user approval.'),
    {
      type: 'plan.approval.requested',
      thread_id: ctx.threadId,
      turn_id: ctx.turnId,
      ...(ctx.planFile !== undefined ? { plan_file: ctx.planFile } : {}),
    },
  ]
}

/** The whole sequence for a plan that is already complete (deltas default to the full text). */
export function planReadyEvents(
  ctx: PlanEventContext,
  planText: string,
  deltas: readonly string[] = [planText],
): ThreadEvent[] {
  return [
    ...planStartedEvents(ctx),
    ...deltas.filter((delta) => delta.length > 0).map((delta) => planDeltaEvent(ctx, delta)),
    ...planCompletedEvents(ctx, planText),
  ]
}

function harness(
  ctx: PlanEventContext,
  event: 'planning_started' | 'planning_completed',
  message: string,
): ThreadEvent {
  return {
    type: 'item.completed',
    item: {
      id: ctx.harnessItemId(),
      type: 'harness',
      event,
      message,
      ...(ctx.planFile !== undefined ? { path: ctx.planFile } : {}),
    },
  }
}
