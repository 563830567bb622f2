import type { TurnStatus } from '../../contract/api.ts'
import type { EngineState, OpenTurn } from '../../contract/engine-state.ts'
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
import { openMcpTools } from '../mcp/mcp-tools.ts'
import { admittedModel } from '../model/admitted-model.ts'
import { sessionPrice } from '../model/budget.ts'
import { resolveModelSettings } from '../model/model-settings.ts'
import { detectPlan } from '../plan/plan-detection.ts'
import type { TurnOptions } from '../session-api.ts'
import { recordTurnChanges } from '../verifier/turn-changes.ts'
import { closeOpenTurn } from './close-turn.ts'
import { TurnCancelled, turnHeartbeat } from './heartbeat.ts'
import type { TurnEnd } from './turn-loop.ts'
import { runTurnLoop } from './turn-loop.ts'
import { toolCallContext } from './turn-tools.ts'

export interface DriveTurnInput {
  deps: ServiceDeps
  ref: SessionRef
  lease: Lease
  threadId: string
  state: EngineState
  writer: TurnWriter
  open: OpenTurn
  options: TurnOptions
  /** Transcript length before the new turn's own messages (undefined when continuing). */
  turnStart: number | undefined
  ackIntents: string[]
  /** Notices gathered before the loop (e.g. session_start hooks of a resumed turn). */
  warnings?: string[]
}

/**
 * Runs an open turn's model ↔ tool loop to its end and commits it: completed, failed,
 * terminal (thread.completed), cancelled, or still open (`awaiting_approval`, `waiting`).
 */
export async function driveTurn(input: DriveTurnInput) {
  const { deps, ref, lease, state, writer, open, options, turnStart, ackIntents } = input
  const { dispatcher, history } = writer
  const { threadId } = input
  const warnings: string[] = [...(input.warnings ?? [])]
  /** Continuing tool calls (a wait, an approval): they run before any model call. */
  const resuming = open.pending_calls.length > 0
  // A new turn reads a stale MCP catalog first: the turn's tool set is fixed from here on.
  const mcp = await openMcpTools(deps, ref, state, {
    refresh: turnStart !== undefined,
    warnings,
    signal: options.signal,
  })
  const calls = toolCallContext(deps, ref, state, open, writer, warnings, options.signal, mcp)
  const settings = resolveModelSettings(state.config.model, deps.defaults)
  const heartbeat = turnHeartbeat(deps, ref, lease)
  const compaction = new TurnCompaction({
    deps,
    ref,
    threadId: threadId,
    state,
    open,
    writer,
    settings,
    tools: calls.tools.catalog,
    warnings,
    turnStart,
    heartbeat,
    signal: options.signal,
  })
  let end: TurnEnd | { kind: 'cancelled' }
  try {
    end = await runTurnLoop({
      state,
      open,
      model: (step) =>
        admittedModel(
          {
            deps,
            tenant: ref.tenant,
            sessionId: ref.sessionId,
            price: settings && sessionPrice(settings),
          },
          step,
        ),
      settings,
      calls,
      compaction,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onModelCall ? { onModelCall: options.onModelCall } : {}),
      heartbeat,
    })
  } catch (error) {
    if (error instanceof TurnCancelled) {
      end = { kind: 'cancelled' }
    } else if (isTurnlineError(error, 'quota_exceeded') && (resuming || writer.committed)) {
      // A model call was refused after this call ran tools or committed: that work is kept, the
      // turn stays open, and a turn without input continues it once the quota allows. (Refused
      // before any of that, the error answers the call, 429, with nothing written.)
      warnings.push(
        `paused: ${error.message}; the turn stays open: POST …/turns without input continues it`,
      )
      end = { kind: 'waiting' }
    } else {
      throw error
    }
  } finally {
    await mcp?.close()
  }

  let status: TurnStatus
  if (end.kind === 'cancelled') {
    // Ended honestly: open tool calls fail, the turn fails, the session ends cancelled.
    closeOpenTurn(dispatcher, history, open, 'cancelled')
    dispatcher.emit(
      threadCompletedEvent(threadId, ref.sessionId, state, {
        subtype: 'cancelled',
        outcomeCode: 'cancelled',
      }),
    )
    status = 'terminal'
  } else if (end.kind === 'awaiting_approval' || end.kind === 'waiting') {
    // The turn stays open: its state is committed and a later call continues it.
    state.open_turn = open
    status = end.kind
  } else if (end.kind === 'completed') {
    const planned = detectPlan({
      state,
      history,
      dispatcher,
      threadId,
      turnId: open.turn_id,
      now: deps.clock.now(),
      harnessItemId: () => `harness-${deps.ids.uuid()}`,
    })
    dispatcher.emit({ type: 'turn.completed', usage: open.usage })
    state.last_failure = null
    status = planned ? 'awaiting_approval' : 'completed'
    await fireStop(deps, ref, state, warnings, options.signal)
  } else {
    dispatcher.emit({ type: 'turn.failed', message: end.message, usage: open.usage })
    state.last_failure = end.message
    status = end.kind === 'terminal' ? 'terminal' : 'failed'
    if (end.kind === 'terminal') {
      // A limit: stop_reason keeps the model's last finish reason (the message is in turn.failed).
      dispatcher.emit(threadCompletedEvent(threadId, ref.sessionId, state, end))
    }
  }
  if (end.kind !== 'awaiting_approval' && end.kind !== 'waiting') state.open_turn = null
  recordTurnChanges(state, open.turn_id, dispatcher.all())
  await noteTurnSignal(
    deps,
    ref,
    state,
    status === 'completed' || status === 'failed' ? status : 'other',
    warnings,
  )
  await compaction.finish(status === 'completed' || status === 'failed' ? status : 'other')
  if (state.end_after_turn && (status === 'completed' || status === 'failed')) {
    // An automation run ends its thread with its turn, in the same commit.
    const completion = completionOf(state)
    const reason = completion.subtype === 'success' ? undefined : (state.last_failure ?? undefined)
    dispatcher.emit(threadCompletedEvent(threadId, ref.sessionId, state, completion, reason))
    status = 'terminal'
  }
  const answer = await respond(deps, ref, writer, {
    turnId: open.turn_id,
    status,
    warnings,
    remember: true,
  })
  return { ...answer, ackIntents }
}
