import type { TurnStatus } from '../../contract/api.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { Lease } from '../../ports/coordinator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { noteTurnSignal } from '../agent-layer/turn-signals.ts'
import { TurnCompaction } from '../compaction/turn-compaction.ts'
import { respond } from '../engine/respond.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { completionOf, threadCompletedEvent } from '../engine/thread-completion.ts'
import type { TurnWriter } from '../engine/turn-writer.ts'
import { fireStop } from '../hooks/turn-hooks.ts'
import { type McpTools, openMcpTools } from '../mcp/mcp-tools.ts'
import { admittedModel } from '../model/admitted-model.ts'
import { sessionPrice } from '../model/budget.ts'
import { type ResolvedModelSettings, resolveModelSettings } from '../model/model-settings.ts'
import { detectPlan } from '../plan/plan-detection.ts'
import type { TurnOptions } from '../session-api.ts'
import { recordTurnChanges, verificationRequired } from '../verifier/turn-changes.ts'
import { closeOpenTurn } from './close-turn.ts'
import { TurnCancelled, turnHeartbeat } from './heartbeat.ts'
import type { TurnEnd } from './turn-loop.ts'
import { runTurnLoop } from './turn-loop.ts'
import type { TurnMachine } from './turn-machine.ts'
import { toolCallContext } from './turn-tools.ts'

export interface DriveTurnInput {
  deps: ServiceDeps
  ref: SessionRef
  lease: Lease
  threadId: string
  /** The turn being driven, with the invocation's engine state. */
  turn: TurnMachine
  writer: TurnWriter
  options: TurnOptions
  /** Transcript length before the new turn's own messages (undefined when continuing). */
  turnStart: number | undefined
  ackIntents: string[]
  /** Notices gathered before the loop (e.g. session_start hooks of a resumed turn). */
  warnings?: string[]
}

/** How the loop ended, cancellation included. */
type DrivenEnd = TurnEnd | { kind: 'cancelled' }

/**
 * Runs an open turn's model ↔ tool loop to its end and commits it: completed, failed,
 * terminal (thread.completed), cancelled, or still open (`awaiting_approval`, `waiting`).
 */
export async function driveTurn(input: DriveTurnInput) {
  // The model calls' settlements with the tenant's limiter run beside the turn's commits
  // (admitted-model.ts); the turn answers once they are done, whatever its end.
  const settlements: Promise<void>[] = []
  try {
    return await driveTurnSettling(input, settlements)
  } finally {
    await Promise.all(settlements)
  }
}

async function driveTurnSettling(input: DriveTurnInput, settlements: Promise<void>[]) {
  const { deps, ref, turn, writer, options, turnStart } = input
  const warnings: string[] = [...(input.warnings ?? [])]
  // A new turn reads a stale MCP catalog first: the turn's tool set is fixed from here on.
  const mcp = await openMcpTools(deps, ref, turn.state, {
    refresh: turnStart !== undefined,
    warnings,
    signal: options.signal,
    ...(options.timeLeft ? { deadline: { timeLeft: options.timeLeft, clock: deps.clock } } : {}),
  })
  const calls = toolCallContext({ deps, ref, turn, writer, warnings, options, mcp })
  const settings = resolveModelSettings(turn.state.config.model, deps.defaults)
  const heartbeat = turnHeartbeat(deps, ref, input.lease)
  const compaction = new TurnCompaction({
    deps,
    ref,
    threadId: input.threadId,
    state: turn.state,
    open: turn.open,
    turn,
    writer,
    settings,
    tools: calls.tools.catalog,
    warnings,
    turnStart,
    heartbeat,
    signal: options.signal,
    ...(options.timeLeft ? { deadline: { timeLeft: options.timeLeft, clock: deps.clock } } : {}),
  })
  const end = await loopToEnd({ input, mcp, warnings }, async () =>
    runTurnLoop({
      turn,
      model: (step) => admittedModel({ ...modelOwner(input, settings), settlements }, step),
      settings,
      calls,
      compaction,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onModelCall ? { onModelCall: options.onModelCall } : {}),
      ...(options.timeLeft ? { deadline: { timeLeft: options.timeLeft, clock: deps.clock } } : {}),
      heartbeat,
    }),
  )
  const settled = await settleEnd(input, end, warnings)
  recordTurnChanges(turn.state, turn.open.turn_id, writer.dispatcher.all())
  const signal = settled === 'completed' || settled === 'failed' ? settled : 'other'
  await noteTurnSignal(deps, ref, turn.state, signal, warnings)
  await compaction.finish(signal)
  const status = endThreadAfterTurn(input, settled, warnings)
  const answer = await respond(deps, ref, writer, {
    turnId: turn.open.turn_id,
    status,
    warnings,
    remember: true,
  })
  return { ...answer, ackIntents: input.ackIntents }
}

/**
 * An automation run ends its thread with its turn, in the same commit: then `terminal`. Not while
 * its newest change waits for a verification the session requires (`harness.verification:
 * required`), as `POST …/complete` is refused then: the thread stays open, the warning says why.
 */
function endThreadAfterTurn(
  input: DriveTurnInput,
  status: TurnStatus,
  warnings: string[],
): TurnStatus {
  const { state } = input.turn
  if (!state.end_after_turn || (status !== 'completed' && status !== 'failed')) return status
  const unverified = verificationRequired(state, 'the session ends')
  if (unverified) {
    warnings.push(`the session stays open: ${unverified.message}`)
    return status
  }
  const completion = completionOf(state)
  const reason = completion.subtype === 'success' ? undefined : (state.last_failure ?? undefined)
  input.writer.dispatcher.emit(
    threadCompletedEvent(input.threadId, input.ref.sessionId, state, completion, reason),
  )
  return 'terminal'
}

function modelOwner(input: DriveTurnInput, settings: ResolvedModelSettings | undefined) {
  const { deps, ref } = input
  const price = settings && sessionPrice(settings)
  return { deps, tenant: ref.tenant, sessionId: ref.sessionId, workspace: ref.workspace, price }
}

/**
 * The loop's end, with what ends it from outside: a cancellation, and a model call refused
 * for quota after this call ran tools or committed (that work is kept and the turn stays open:
 * a turn without input continues it once the quota allows; refused before any of that, the
 * error answers the call, 429, with nothing written). The MCP connections close either way.
 */
async function loopToEnd(
  around: { input: DriveTurnInput; mcp: McpTools | undefined; warnings: string[] },
  loop: () => Promise<TurnEnd>,
): Promise<DrivenEnd> {
  const { input, mcp, warnings } = around
  /** Continuing tool calls (a wait, an approval): they run before any model call. */
  const resuming = input.turn.open.pending_calls.length > 0
  try {
    return await loop()
  } catch (error) {
    if (error instanceof TurnCancelled) return { kind: 'cancelled' }
    if (isTurnlineError(error, 'quota_exceeded') && (resuming || input.writer.committed)) {
      warnings.push(
        `paused: ${error.message}; the turn stays open: POST …/turns without input continues it`,
      )
      return { kind: 'waiting' }
    }
    throw error
  } finally {
    await mcp?.close()
  }
}

/** The turn's end as events and transitions; the status the call answers with. */
async function settleEnd(
  input: DriveTurnInput,
  end: DrivenEnd,
  warnings: string[],
): Promise<TurnStatus> {
  const { deps, ref, turn, writer, threadId } = input
  const { dispatcher, history } = writer
  const { state, open } = turn
  switch (end.kind) {
    case 'cancelled':
      // Ended honestly: open tool calls fail, the turn fails, the session ends cancelled.
      closeOpenTurn({ dispatcher, history, turn, why: 'cancelled' })
      dispatcher.emit(
        threadCompletedEvent(threadId, ref.sessionId, state, {
          subtype: 'cancelled',
          outcomeCode: 'cancelled',
        }),
      )
      turn.apply({ type: 'turn_ended' })
      return 'terminal'
    case 'awaiting_approval':
    case 'waiting':
      // The turn stays open: its state is committed and a later call continues it.
      turn.apply({ type: 'turn_left_open' })
      return end.kind
    case 'completed': {
      const planned = detectPlan({
        turn,
        history,
        dispatcher,
        threadId,
        now: deps.clock.now(),
        harnessItemId: () => `harness-${deps.ids.uuid()}`,
      })
      dispatcher.emit({ type: 'turn.completed', usage: open.usage })
      turn.apply({ type: 'turn_completed' })
      await fireStop(
        deps,
        ref,
        state,
        warnings,
        input.options.signal,
        (answer) => writer.recordHookAnswer(answer),
        input.options.timeLeft,
      )
      return planned ? 'awaiting_approval' : 'completed'
    }
    case 'failed':
    case 'terminal':
      dispatcher.emit({ type: 'turn.failed', message: end.message, usage: open.usage })
      turn.apply({ type: 'turn_failed', message: end.message })
      if (end.kind === 'failed') return 'failed'
      // A limit: stop_reason keeps the model's last finish reason (the message is in turn.failed).
      dispatcher.emit(threadCompletedEvent(threadId, ref.sessionId, state, end))
      return 'terminal'
  }
}
