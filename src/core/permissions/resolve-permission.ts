import type { PendingCall } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type {
  PermissionRequestedEvent,
  PermissionResolvedEvent,
} from '../../contract/permission-and-plan-events.ts'
import type {
  PendingPermission,
  PermissionResolution,
  PermissionResolutionRequest,
} from '../../contract/permission-resolution.ts'
import { type RejectionOutcome, rejectionDetail } from './rejected-tool.ts'

/** What the engine does with the waiting call once a decision is in. */
export type PermissionAftermath =
  | { kind: 'run' }
  | {
      kind: 'reject'
      outcome: RejectionOutcome
      detail: string
      /** `followup` only: the user's message, appended after the tool message. */
      followup?: HistoryMessage
    }

export interface ResolvedPermission {
  resolution: PermissionResolution
  event: PermissionResolvedEvent
  aftermath: PermissionAftermath
}

/** Starts a wait: the event to emit and the record to keep in the open turn. */
export function requestPermission(
  call: PendingCall,
  now: number,
): { pending: PendingPermission; event: PermissionRequestedEvent } {
  return {
    pending: {
      tool_name: call.tool_name,
      item_id: call.item_id,
      tool_call_id: call.tool_call_id,
      requested_at: now,
    },
    event: { type: 'permission.requested', tool_name: call.tool_name },
  }
}

/**
 * Applies `POST …/permissions` to the waiting call. Refuses (409) when nothing waits and
 * (400) when the body names another tool. `wait_ms` = now − requested_at, floored at 0.
 */
export function resolvePermission(
  pending: PendingPermission | undefined,
  request: PermissionResolutionRequest,
  now: number,
): ResolvedPermission {
  if (!pending) {
    throw new TurnlineError('conflict', 'no tool call is waiting for a permission decision', {
      retryable: false,
    })
  }
  if (pending.tool_name !== request.tool_name) {
    throw new TurnlineError(
      'invalid_input',
      `the waiting permission request is for tool ${pending.tool_name}, not ${request.tool_name}`,
      { details: { field: 'tool_name', expected: pending.tool_name } },
    )
  }
  const waitMs = Math.max(0, Math.floor(now - pending.requested_at))
  const resolution: PermissionResolution = {
    tool_name: pending.tool_name,
    decision: request.decision,
    item_id: pending.item_id,
    tool_call_id: pending.tool_call_id,
    requested_at: pending.requested_at,
    resolved_at: Math.max(now, pending.requested_at),
    wait_ms: waitMs,
    ...(request.message !== undefined ? { message: request.message } : {}),
  }
  return {
    resolution,
    event: {
      type: 'permission.resolved',
      tool_name: pending.tool_name,
      decision: request.decision,
      wait_ms: waitMs,
    },
    aftermath: aftermathOf(resolution),
  }
}

function aftermathOf(resolution: PermissionResolution): PermissionAftermath {
  const name = resolution.tool_name
  switch (resolution.decision) {
    case 'allow':
      return { kind: 'run' }
    case 'deny':
      return {
        kind: 'reject',
        outcome: 'permission_rejected',
        detail: rejectionDetail('permission_rejected', name, 'the user denied it'),
      }
    case 'cancelled':
      return {
        kind: 'reject',
        outcome: 'permission_cancelled',
        detail: rejectionDetail('permission_cancelled', name),
      }
    case 'followup':
      return {
        kind: 'reject',
        outcome: 'followup',
        detail: rejectionDetail('followup', name),
        ...(resolution.message !== undefined
          ? { followup: { role: 'user', content: resolution.message } }
          : {}),
      }
  }
}
