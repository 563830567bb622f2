import type { HistoryMessage } from '../../contract/history-message.ts'
import type { EventDispatcher } from '../engine/event-dispatcher.ts'
import type { TurnMachine } from '../turn/turn-machine.ts'
import { permissionPolicy } from '../turn/turn-tools.ts'
import { originalTask } from './handoff-prompt.ts'
import { planReadyEvents } from './plan-events.ts'
import { extractProposedPlan } from './proposed-plan.ts'

/**
 * In plan mode, a finished answer holding a complete `<proposed_plan>` becomes VT Code's plan
 * sequence (harness items, the `<turn>-plan` item, `plan.delta`, `plan.approval.requested`) and
 * a pending approval in the state: the turn ends `awaiting_approval`. Returns whether it did.
 */
export function detectPlan(input: {
  turn: TurnMachine
  history: readonly HistoryMessage[]
  dispatcher: EventDispatcher
  threadId: string
  now: number
  harnessItemId: () => string
}): boolean {
  const { state } = input.turn
  const turnId = input.turn.open.turn_id
  if (permissionPolicy(state).mode !== 'plan') return false
  const plan = extractProposedPlan(state.last_assistant_text ?? '')
  if (!plan?.complete || plan.text === '') return false
  const events = planReadyEvents(
    { threadId: input.threadId, turnId, harnessItemId: input.harnessItemId },
    plan.text,
  )
  for (const event of events) input.dispatcher.emit(event)
  const task = originalTask(input.history)
  input.turn.apply({
    type: 'plan_proposed',
    approval: {
      turn_id: turnId,
      plan: plan.text,
      ...(task !== undefined ? { task } : {}),
      requested_at: input.now,
    },
  })
  return true
}
