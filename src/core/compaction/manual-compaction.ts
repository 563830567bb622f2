import type { TurnResponse } from '../../contract/api.ts'
import type { CompactRequest } from '../../contract/compact-request.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { idempotentCall, recordedTurn } from '../engine/idempotency.ts'
import { respond } from '../engine/respond.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import { completedError, replay } from '../engine/turn-replay.ts'
import { TurnWriter } from '../engine/turn-writer.ts'
import { withLease } from '../engine/with-lease.ts'
import { writableState } from '../engine/writable-state.ts'
import { openMcpTools } from '../mcp/mcp-tools.ts'
import { resolveModelSettings } from '../model/model-settings.ts'
import type { TurnOptions } from '../session-api.ts'
import { sessionTools } from '../turn/turn-tools.ts'
import { compactTranscript } from './compact-transcript.ts'
import { meterFor, segmentBasis, thresholdsFor } from './compaction-basis.ts'
import type { CompactionOutcome, CompactionRequest, CompactionRun } from './compaction-run.ts'

/**
 * `POST …/compact`: one local compaction outside a turn (trigger `manual`, always summarizes,
 * optional instructions). Answers a TurnResponse holding the `thread.compact_boundary`; a
 * retried Idempotency-Key gets the same answer without a second summary call. Refused (409)
 * while a turn is open — its tool calls refer to the transcript — and when there is nothing to
 * compact. In a request the platform bounds (`timeLeft`, Lambda's timeout) the compaction stops
 * before it as a turn's does (timed-compaction.ts) and keeps nothing: `compactionOutOfTime`.
 */
export async function compactSession(
  deps: ServiceDeps,
  ref: SessionRef,
  request: CompactRequest,
  options: TurnOptions = {},
): Promise<TurnResponse> {
  const call = await idempotentCall(options.idempotencyKey, 'compact', request)
  return withLease(deps, ref, call, 'admit', async (_lease, snapshot) => {
    const state = writableState(snapshot)
    const known = recordedTurn(state, call)
    if (known) return { response: await replay(deps, ref, known), record: known }
    if (snapshot.status === 'completed') throw completedError(ref)
    if (state.open_turn) {
      throw new TurnlineError(
        'conflict',
        `${state.open_turn.turn_id} is still open: continue it (POST /turns without input) or cancel before compacting`,
      )
    }
    const settings = summarySettings(deps, state)
    const writer = new TurnWriter(deps, ref, snapshot, state, call, options.onEvent)
    const warnings: string[] = []
    // The catalog in force (no refresh, no connection): the segment is the turn's.
    const mcp = await openMcpTools(deps, ref, state, { refresh: false, warnings })
    const outcome = await compactCountingCharge(
      {
        deps,
        ref,
        threadId: snapshot.threadId,
        state,
        settings,
        history: writer.history,
        replaceHistory: (messages) => writer.replaceHistory(messages),
        recordHookAnswer: (answer) => writer.recordHookAnswer(answer),
        dispatcher: writer.dispatcher,
        basis: segmentBasis(
          state,
          settings,
          sessionTools(deps, ref, state, mcp, writer.history, () => writer.snapshot.lastBatch)
            .catalog,
        ),
        meter: meterFor(deps, state, settings),
        thresholds: thresholdsFor(state, settings),
        appliedIntents: snapshot.appliedIntents,
        warnings,
        signal: options.signal,
        ...(options.timeLeft
          ? { deadline: { timeLeft: options.timeLeft, clock: deps.clock } }
          : {}),
      },
      { trigger: 'manual', force: true, instructions: request.instructions },
      writer,
    )
    if (outcome.kind === 'stopped') throw compactionOutOfTime()
    if (outcome.kind === 'skipped') throw nothingToCompact()
    if (outcome.kind === 'failed') throw outcome.error
    const turnId = `turn-${state.turn_counter}`
    return respond(deps, ref, writer, { turnId, status: 'completed', warnings, remember: true })
  })
}

/**
 * A manual compaction stopped before the platform's timeout: nothing of it was kept (no archive,
 * no boundary, the transcript as it was), so the same request sent again — with its
 * Idempotency-Key, if it had one: none was recorded — compacts anew. 409, retryable.
 */
export function compactionOutOfTime(): TurnlineError {
  return new TurnlineError(
    'conflict',
    "the request's time ran out while the transcript was compacted (the platform's timeout): nothing of that compaction is kept; send the request again",
    { retryable: true, retryAfter: 1, details: { reason: 'out_of_time' } },
  )
}

/**
 * The compaction, and whatever ends it short of a boundary (stopped, failed, cut short by an
 * error), the call the provider answered and billed counted all the same: `keepUsage`.
 */
async function compactCountingCharge(
  run: CompactionRun,
  request: CompactionRequest,
  writer: TurnWriter,
): Promise<CompactionOutcome> {
  const charged = run.state.usage
  const keep = (why: string) =>
    run.state.usage === charged ? undefined : keepUsage(run.deps, writer, why)
  let outcome: CompactionOutcome
  try {
    outcome = await compactTranscript(run, request)
  } catch (error) {
    await keep('was cut short by an error')
    throw error
  }
  if (outcome.kind === 'stopped') await keep("was stopped by the platform's timeout")
  if (outcome.kind === 'failed') await keep(`failed (${outcome.error.message})`)
  return outcome
}

/**
 * Commits the session's usage and cost after a compaction that kept nothing but its model call's
 * charge (stopped, failed, or cut short by an error: `why`):
 * the provider billed that call, so the session counts it, once — the request sent again makes
 * (and counts) a call of its own. The batch holds one `error` item saying so, VT Code's
 * non-fatal error (a batch holds at least one event; a thread-level `error` event would end the
 * session's Open Responses view as failed). A commit that fails here is logged; the request
 * answers the compaction's error.
 */
async function keepUsage(deps: ServiceDeps, writer: TurnWriter, why: string): Promise<void> {
  const { state } = writer
  const turnId = `turn-${state.turn_counter}`
  const id = `item_${state.item_counter}`
  state.item_counter += 1
  const message = `the manual compaction ${why}: nothing of it is kept but its model call's usage, which is counted`
  writer.dispatcher.emit({ type: 'item.completed', item: { id, type: 'error', message } })
  try {
    await writer.commit(turnId, 'turn_end')
  } catch (error) {
    serviceLog(deps)({
      msg: 'committing a stopped compaction usage failed',
      session: writer.snapshot.ref.sessionId,
      error: String(error),
    })
  }
}

function nothingToCompact(): TurnlineError {
  return new TurnlineError('conflict', 'nothing to compact: the transcript is empty')
}

/** The model settings of the summary call; refused when no model is configured. */
function summarySettings(deps: ServiceDeps, state: EngineState) {
  const settings = resolveModelSettings(state.config.model, deps.defaults)
  if (settings) return settings
  throw new TurnlineError(
    'model_not_configured',
    'compaction needs one summary call and no model is configured: set OPENAI_API_KEY and TURNLINE_MODEL, or pass "model"',
  )
}
