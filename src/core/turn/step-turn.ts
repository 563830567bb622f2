import type { TurnRequest, TurnResponse } from '../../contract/api.ts'
import type { EngineState, OpenTurn } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import { ZERO_USAGE } from '../../contract/usage.ts'
import type { Lease, QueuedIntent } from '../../ports/coordinator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionSnapshot } from '../../store/session-snapshot.ts'
import { startsFromHandoff, turnStartMessages } from '../agent-layer/turn-start.ts'
import type { AdmittedStep } from '../engine/admit-step.ts'
import {
  assertSameRequest,
  type IdempotentCall,
  idempotentCall,
  recordedTurn,
} from '../engine/idempotency.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { completedError, replay } from '../engine/turn-replay.ts'
import { TurnWriter } from '../engine/turn-writer.ts'
import { withLease } from '../engine/with-lease.ts'
import { writableState } from '../engine/writable-state.ts'
import { fireSessionStart } from '../hooks/turn-hooks.ts'
import type { TurnOptions } from '../session-api.ts'
import { assertVerified } from '../verifier/turn-changes.ts'
import { closeOpenTurn } from './close-turn.ts'
import { driveTurn } from './drive-turn.ts'
import { planIntentBoundary } from './intent-boundary.ts'

/**
 * One turn per call: lease → rehydrate → (replay | continue the open turn | start a new one) →
 * model ↔ tool loop → commit → release with tip and idempotency record. Invocations of
 * side-effecting tools are committed before the tools run. The step is admitted under the lease
 * (`withLease`), unless it runs `within` a step admitted already (an exec run).
 */
export async function stepTurn(
  deps: ServiceDeps,
  ref: SessionRef,
  request: TurnRequest,
  options: TurnOptions = {},
  within?: AdmittedStep,
): Promise<TurnResponse> {
  const call = await idempotentCall(options.idempotencyKey, 'turn', request)
  return withLease(deps, ref, call, within ?? 'admit', async (lease, snapshot, intents) => {
    const state = writableState(snapshot)
    const record = recordedTurn(state, call)
    if (record) return { response: await replay(deps, ref, record), record }
    if (snapshot.status === 'completed') throw completedError(ref)
    return runTurn(deps, ref, lease, snapshot, state, request, options, intents, call)
  })
}

async function runTurn(
  deps: ServiceDeps,
  ref: SessionRef,
  lease: Lease,
  start: SessionSnapshot,
  state: EngineState,
  request: TurnRequest,
  options: TurnOptions,
  intents: QueuedIntent[],
  call: IdempotentCall | undefined,
) {
  const writer = new TurnWriter(deps, ref, start, state, call, options.onEvent)
  const { dispatcher, history } = writer
  if (request.limits) writer.changeLimits(request.limits)
  const boundary = planIntentBoundary({
    pending: intents,
    appliedWindow: start.appliedIntents,
    history,
  })
  let ackIntents = boundary.alreadyApplied

  if (state.plan_approval) {
    throw new TurnlineError(
      'conflict',
      `a plan from ${state.plan_approval.turn_id} waits for approval: POST /plan-approval first`,
    )
  }
  const previous = state.open_turn ?? undefined
  let open: OpenTurn
  /** Transcript length before a new turn's own messages (a context reset keeps those). */
  let turnStart: number | undefined
  const retried = call !== undefined && previous?.idempotency_key === call.key
  if (retried) assertSameRequest(previous?.request_fingerprint, call)
  if (previous && (request.input === undefined || retried)) {
    open = previous
    if (open.pending_permission) {
      throw new TurnlineError(
        'conflict',
        `${open.turn_id} is waiting for a decision on tool ${open.pending_permission.tool_name}: ` +
          'POST /permissions first, or cancel the session',
      )
    }
  } else if (previous && (previous.pending_permission || previous.waiting)) {
    throw new TurnlineError(
      'conflict',
      previous.pending_permission
        ? `${previous.turn_id} is waiting for a decision on tool ${previous.pending_permission.tool_name}: POST /permissions first, or cancel the session`
        : `${previous.turn_id} is waiting for a running tool: POST /turns without input to continue it, or cancel the session`,
    )
  } else {
    // A turn blocked after recovery compaction is retried by a turn without input.
    if (
      request.input === undefined &&
      boundary.apply.length === 0 &&
      !state.compaction?.blocked &&
      !startsFromHandoff(state) &&
      !state.agent?.feedback?.length
    ) {
      throw new TurnlineError(
        'invalid_input',
        'input is required: no turn is waiting to continue and no follow-up is queued',
        { details: { field: 'input' } },
      )
    }
    assertVerified(state, 'the next turn')
    if (previous) closeOpenTurn(dispatcher, history, previous, 'interrupted')
    turnStart = history.length
    const starting = turnStartMessages(state, request.input !== undefined)
    state.turn_counter += 1
    open = {
      turn_id: `turn-${state.turn_counter}`,
      pending_calls: [],
      tools_running: false,
      usage: { ...ZERO_USAGE },
      tool_loops: 0,
      ...(call ? { idempotency_key: call.key, request_fingerprint: call.fingerprint } : {}),
    }
    dispatcher.emit({ type: 'turn.started' })
    // Queued follow-ups came in before this request: they go first, in queue order.
    for (const event of boundary.events) dispatcher.emit(event)
    history.push(...boundary.messages)
    writer.markApplied(boundary.appliedIds)
    ackIntents = boundary.ack
    history.push(...starting)
    if (request.input !== undefined) history.push({ role: 'user', content: request.input })
  }

  // Continuing a turn left open (a wait, an approval, a crash) resumes the session.
  const warnings = turnStart === undefined ? await fireSessionStart(deps, ref, state, 'resume') : []
  return driveTurn({
    deps,
    ref,
    lease,
    threadId: start.threadId,
    state,
    writer,
    open,
    options,
    turnStart,
    ackIntents,
    warnings,
  })
}
