import type { SessionActivity } from '../../contract/api.ts'
import type { EngineState } from '../../contract/engine-state.ts'

/**
 * What a session is doing between calls, from its engine state, for `GET /v1/sessions/:id`
 * (`activity`): a plan or a tool call waiting for a person, a command still running in the
 * sandbox (with the time it started), or a turn left open. Absent when no turn is open and no
 * plan waits. A turn running right now may not show yet: its state is committed before its
 * tools run and when it ends; its events are the live view.
 */
export function currentActivity(state: EngineState): { activity?: SessionActivity } {
  const plan = state.plan_approval
  if (plan) {
    return {
      activity: {
        state: 'awaiting_plan_approval',
        turn_id: plan.turn_id,
        since: new Date(plan.requested_at).toISOString(),
      },
    }
  }
  const open = state.open_turn
  if (!open) return {}
  const call = (itemId: string | undefined) =>
    open.pending_calls.find((pending) => pending.item_id === itemId)
  if (open.pending_permission) {
    return {
      activity: {
        state: 'awaiting_approval',
        turn_id: open.turn_id,
        ...itemOf(call(open.pending_permission.item_id)),
        tool_name: open.pending_permission.tool_name,
        since: new Date(open.pending_permission.requested_at).toISOString(),
      },
    }
  }
  if (open.waiting) {
    const started = open.waiting.resume.started_at
    return {
      activity: {
        state: 'waiting',
        turn_id: open.turn_id,
        ...itemOf(call(open.waiting.item_id)),
        item_id: open.waiting.item_id,
        ...(typeof started === 'number' ? { since: new Date(started).toISOString() } : {}),
      },
    }
  }
  return { activity: { state: 'open', turn_id: open.turn_id } }
}

/** The call's item, tool and, for a command, its command line. */
function itemOf(call: { item_id: string; tool_name: string; arguments: string } | undefined) {
  if (!call) return {}
  return { item_id: call.item_id, tool_name: call.tool_name, ...commandOf(call.arguments) }
}

function commandOf(json: string): { command?: string } {
  try {
    const args: unknown = JSON.parse(json)
    if (typeof args !== 'object' || args === null) return {}
    const { cmd, command } = args as { cmd?: unknown; command?: unknown }
    const line = typeof cmd === 'string' ? cmd : typeof command === 'string' ? command : undefined
    return line === undefined ? {} : { command: line }
  } catch {
    return {}
  }
}
