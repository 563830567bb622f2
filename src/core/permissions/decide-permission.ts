import type { TurnResponse } from '../../contract/api.ts'
import type { PermissionResolutionRequest } from '../../contract/permission-resolution.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { respond } from '../engine/respond.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { completedError } from '../engine/turn-replay.ts'
import { TurnWriter } from '../engine/turn-writer.ts'
import { withLease } from '../engine/with-lease.ts'
import { writableState } from '../engine/writable-state.ts'
import type { TurnOptions } from '../session-api.ts'
import { TurnMachine } from '../turn/turn-machine.ts'
import { resolvePermission } from './resolve-permission.ts'

/**
 * `POST …/permissions`: records the human decision on the call the turn stopped for
 * (`permission.resolved{tool_name, decision, wait_ms}`); the next `POST …/turns` without input
 * continues the same tool loop with it. 409 when nothing waits, 400 for another tool's name.
 */
export async function recordPermissionDecision(
  deps: ServiceDeps,
  ref: SessionRef,
  request: PermissionResolutionRequest,
  options: TurnOptions = {},
): Promise<TurnResponse> {
  return withLease(deps, ref, undefined, 'admit', async (_lease, snapshot) => {
    if (snapshot.status === 'completed') throw completedError(ref)
    const state = writableState(snapshot)
    const open = state.open_turn ?? undefined
    const resolved = resolvePermission(open?.pending_permission, request, deps.clock.now())
    if (!open) throw new Error('unreachable: resolvePermission refuses a missing request')
    const writer = new TurnWriter(deps, ref, snapshot, state, undefined, options.onEvent)
    writer.dispatcher.emit(resolved.event)
    const turn = new TurnMachine(state, open)
    turn.apply({
      type: 'permission_decided',
      approval: {
        item_id: resolved.resolution.item_id,
        decision: resolved.resolution.decision,
        ...(resolved.resolution.message ? { message: resolved.resolution.message } : {}),
      },
    })
    turn.apply({ type: 'turn_left_open' })
    return respond(deps, ref, writer, {
      turnId: open.turn_id,
      status: 'waiting',
      remember: false,
    })
  })
}
