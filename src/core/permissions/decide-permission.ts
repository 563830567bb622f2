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
import { inputKeeping, keepLongText } from '../turn/kept-input.ts'
import { TurnMachine } from '../turn/turn-machine.ts'
import { resolvePermission } from './resolve-permission.ts'

/**
 * `POST …/permissions`: records the human decision on the call the turn stopped for
 * (`permission.resolved{tool_name, decision, wait_ms}`); the next `POST …/turns` without input
 * continues the same tool loop with it. 409 when nothing waits, 400 for another tool's name.
 * A `followup` message over the inline limit is kept whole as an artifact of the session and
 * the model reads its preview (src/core/turn/kept-input.ts).
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
    // A follow-up answer over the inline limit reaches the model as a preview naming its artifact.
    const given = resolved.resolution.message
    const message = given ? await keepLongText(given, inputKeeping(deps, ref)) : undefined
    const writer = new TurnWriter(deps, ref, snapshot, state, undefined, options.onEvent)
    writer.dispatcher.emit(resolved.event)
    const turn = new TurnMachine(state, open)
    turn.apply({
      type: 'permission_decided',
      approval: {
        item_id: resolved.resolution.item_id,
        decision: resolved.resolution.decision,
        ...(message ? { message } : {}),
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
