import type { TurnRequest, TurnResponse } from '../../contract/api.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import { turnInputRecord } from '../../contract/turn-input-record.ts'
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
import { userMessageOf } from '../model/image-input.ts'
import { resolveModelSettings } from '../model/model-settings.ts'
import type { TurnOptions } from '../session-api.ts'
import { assertVerified } from '../verifier/turn-changes.ts'
import { closeOpenTurn } from './close-turn.ts'
import { driveTurn } from './drive-turn.ts'
import { planIntentBoundary } from './intent-boundary.ts'
import { assertTimeForTurn } from './invocation-deadline.ts'
import { inputKeeping, type KeptInput, keepLongInput } from './kept-input.ts'
import { applySessionTransition, TurnMachine } from './turn-machine.ts'

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
    assertTimeForTurn(options.timeLeft)
    return runTurn({ deps, ref, lease, start: snapshot, state, request, options, intents, call })
  })
}

/** One leased turn step: what `stepTurn` read under the lease, and what was asked. */
interface LeasedTurn {
  deps: ServiceDeps
  ref: SessionRef
  lease: Lease
  start: SessionSnapshot
  state: EngineState
  request: TurnRequest
  options: TurnOptions
  intents: QueuedIntent[]
  call: IdempotentCall | undefined
}

/** The turn this call drives: the one left open, or a new one. */
interface DrivenTurn {
  turn: TurnMachine
  /** Transcript length before a new turn's own messages (a context reset keeps those). */
  turnStart: number | undefined
  ackIntents: string[]
}

async function runTurn(input: LeasedTurn) {
  const { deps, ref, start, state, options, call } = input
  const writer = new TurnWriter(deps, ref, start, state, call, options.onEvent)
  if (input.request.limits) {
    applySessionTransition(state, { type: 'limits_changed', limits: input.request.limits })
    writer.configChanged()
  }
  if (state.plan_approval) {
    throw new TurnlineError(
      'conflict',
      `a plan from ${state.plan_approval.turn_id} waits for approval: POST /plan-approval first`,
    )
  }
  const { turn, turnStart, ackIntents } =
    continuedTurn(input, writer) ?? (await newTurn(input, writer))
  // Continuing a turn left open (a wait, an approval, a crash) resumes the session.
  const warnings =
    turnStart === undefined
      ? await fireSessionStart(
          deps,
          ref,
          state,
          'resume',
          (answer) => writer.recordHookAnswer(answer),
          { timeLeft: options.timeLeft },
        )
      : []
  return driveTurn({
    deps,
    ref,
    lease: input.lease,
    threadId: start.threadId,
    turn,
    writer,
    options,
    turnStart,
    ackIntents,
    warnings,
  })
}

/**
 * The open turn this call continues: a call without input, or the retry of the request that
 * opened it (same Idempotency-Key); undefined when a new turn starts. A turn that waits for a
 * permission decision is refused (409) until it has one.
 */
function continuedTurn(input: LeasedTurn, writer: TurnWriter): DrivenTurn | undefined {
  const { state, request, call } = input
  const previous = state.open_turn ?? undefined
  const retried = call !== undefined && previous?.idempotency_key === call.key
  if (retried) assertSameRequest(previous?.request_fingerprint, call)
  if (!previous || (request.input !== undefined && !retried)) return undefined
  if (previous.pending_permission) {
    throw new TurnlineError(
      'conflict',
      `${previous.turn_id} is waiting for a decision on tool ${previous.pending_permission.tool_name}: ` +
        'POST /permissions first, or cancel the session',
    )
  }
  const boundary = intentBoundary(input, writer.history)
  return {
    turn: new TurnMachine(state, previous),
    turnStart: undefined,
    ackIntents: boundary.alreadyApplied,
  }
}

/**
 * A new turn: a turn left open by a crash is closed (interrupted), queued follow-ups go first
 * (in queue order), then what the turn starts with and the request's input. Refused while an
 * open turn waits for a decision or a running tool, and without input unless something queued
 * or left blocked gives it one.
 */
async function newTurn(input: LeasedTurn, writer: TurnWriter): Promise<DrivenTurn> {
  const { state, request, call } = input
  const { dispatcher, history } = writer
  const previous = state.open_turn ?? undefined
  if (previous && (previous.pending_permission || previous.waiting)) {
    throw new TurnlineError(
      'conflict',
      previous.pending_permission
        ? `${previous.turn_id} is waiting for a decision on tool ${previous.pending_permission.tool_name}: POST /permissions first, or cancel the session`
        : `${previous.turn_id} is waiting for a running tool: POST /turns without input to continue it, or cancel the session`,
    )
  }
  const boundary = intentBoundary(input, history)
  // A turn blocked after recovery compaction is retried by a turn without input; so is the
  // first turn of a session seeded with a transcript that ends with tool results (a
  // conversation carrying a client's function outputs): the model reads them.
  if (
    request.input === undefined &&
    !(state.turn_counter === 0 && history.at(-1)?.role === 'tool') &&
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
  const kept = await keptInput(input)
  const userMessage =
    kept === undefined
      ? undefined
      : userMessageOf(kept.input, resolveModelSettings(state.config.model, input.deps.defaults))
  if (previous)
    closeOpenTurn({
      dispatcher,
      history,
      turn: new TurnMachine(state, previous),
      why: 'interrupted',
    })
  const turnStart = history.length
  const starting = turnStartMessages(state, { hasInput: request.input !== undefined })
  const turn = TurnMachine.opening(state, call)
  dispatcher.emit({ type: 'turn.started' })
  for (const event of boundary.events) dispatcher.emit(event)
  history.push(...boundary.messages)
  writer.markApplied(boundary.appliedIds)
  history.push(...starting)
  if (userMessage) history.push(userMessage)
  writer.recordTurnInput(turnInputRecord(kept?.input, boundary.apply, kept?.artifacts))
  return { turn, turnStart, ackIntents: boundary.ack }
}

/** The request's input, its text over the inline limit kept whole as artifacts (previewed). */
function keptInput({ deps, ref, request }: LeasedTurn): Promise<KeptInput | undefined> {
  if (request.input === undefined) return Promise.resolve(undefined)
  return keepLongInput(request.input, inputKeeping(deps, ref))
}

function intentBoundary(input: LeasedTurn, history: readonly HistoryMessage[]) {
  return planIntentBoundary({
    pending: input.intents,
    appliedWindow: input.start.appliedIntents,
    history,
  })
}
