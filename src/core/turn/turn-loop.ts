import type { EngineState } from '../../contract/engine-state.ts'
import { isTurnlineError, type TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { TimerClock } from '../../ports/clock.ts'
import type { ModelClient } from '../../ports/model-client.ts'
import type { TurnCompaction } from '../compaction/turn-compaction.ts'
import type { Completion } from '../engine/thread-completion.ts'
import { budgetNotices, reachedStop } from '../guardrails/stop-conditions.ts'
import { assistantMessage } from '../model/assistant-message.ts'
import { addCost, sessionPrice } from '../model/budget.ts'
import type { ResolvedModelSettings } from '../model/model-settings.ts'
import { requestSettings } from '../model/model-settings.ts'
import { type ModelStepResult, runModelStep } from '../model/model-step.ts'
import { promptCacheKey } from '../model/prompt-cache-key.ts'
import { normalizeStopReason } from '../model/stop-reason.ts'
import { systemPrompt } from '../orientation/system-prompt.ts'
import { CLIENT_TOOL_KIND } from '../tools/client-tool-handler.ts'
import type { ToolCallContext } from '../tools/tool-calls.ts'
import { processToolCalls, resolveInterrupted } from '../tools/tool-calls.ts'
import {
  deadlineWatch,
  type InvocationTimeLeft,
  MODEL_CALL_STOPPED,
  pauseBeforeDeadline,
} from './invocation-deadline.ts'
import { type OfferedTools, offeredTools } from './offered-tools.ts'
import type { TurnMachine } from './turn-machine.ts'

export interface TurnLoopContext {
  /** The open turn and the engine state: changed only through its transitions. */
  turn: TurnMachine
  /** The client of one model request, named within the session (reserved and settled). */
  model: (step: string) => ModelClient
  settings: ResolvedModelSettings | undefined
  /** Tool processing (registry, permissions, hooks, runs); shares dispatcher and history. */
  calls: ToolCallContext
  heartbeat: () => Promise<void>
  /** Thresholds, recovery and segments (compaction/turn-compaction.ts); absent = none. */
  compaction?: TurnCompaction
  signal?: AbortSignal
  /** Told of every model request made (operator metrics). */
  onModelCall?: () => void
  /**
   * The platform's bound on the invocation (Lambda's timeout): no model request or tool round
   * starts, and a model request under way stops, when its time runs short; the turn then stays
   * open (`waiting`) for the next call to continue (invocation-deadline.ts).
   */
  deadline?: { timeLeft: InvocationTimeLeft; clock: TimerClock }
}

export type TurnEnd =
  | { kind: 'completed' }
  | { kind: 'awaiting_approval' }
  | { kind: 'waiting' }
  | { kind: 'failed'; message: string }
  | ({ kind: 'terminal'; message: string } & Completion)

/**
 * The model ↔ tool loop of one turn, from wherever the open turn stands: pending calls first,
 * then model requests until a response asks for no tool, a stop condition is reached
 * (guardrails/stop-conditions.ts: before each request, and after each response once its tool
 * calls have their results), or the tools stop the turn (an approval, a wait).
 */
export async function runTurnLoop(ctx: TurnLoopContext): Promise<TurnEnd> {
  const { turn, calls, compaction } = ctx
  if (turn.open.pending_calls.length > 0) {
    if (turn.open.tools_running && !turn.open.waiting) resolveInterrupted(calls)
    const end = await processToolCalls(calls)
    if (end !== 'done') return { kind: end }
  }
  if ((await compaction?.orientResetAndOpenSegment()) === 'paused') return { kind: 'waiting' }
  for (;;) {
    const stop = reachedStop({ state: turn.state, open: turn.open, at: 'before_request' })
    if (stop) return stop
    if (!ctx.settings) return { kind: 'failed', message: MODEL_NOT_CONFIGURED }
    const late = pausedBeforeDeadline(ctx)
    if (late) return late
    if ((await compaction?.beforeRequest()) === 'paused') return { kind: 'waiting' }
    const offer = offeredTools(turn.state.config, turn.open, calls.tools.catalog)
    if ('refused' in offer) return { kind: 'failed', message: offer.refused }
    const step = await requestWithRecovery(ctx, ctx.settings, offer)
    if ('kind' in step) return step
    accountResponse(ctx, ctx.settings, step)
    const over = reachedStop({ state: turn.state, open: turn.open, at: 'after_response' })
    if (step.tools.length === 0) return over ?? { kind: 'completed' }
    // The client's function tools of a round go last: the server's run first, then the turn
    // waits on the client for the rest (tool-calls.ts), so every call before them has a result.
    const forClient = (name: string) => calls.tools.get(name)?.kind === CLIENT_TOOL_KIND
    const ordered = [
      ...step.tools.filter(({ call }) => !forClient(call.name)),
      ...step.tools.filter(({ call }) => forClient(call.name)),
    ]
    turn.apply({
      type: 'tool_round_requested',
      calls: ordered.map(({ itemId, call }) => ({
        item_id: itemId,
        tool_call_id: call.id,
        tool_name: call.name,
        arguments: call.arguments,
      })),
    })
    // The round's calls are recorded, none started: the next call runs them.
    const lateRound = pausedBeforeDeadline(ctx)
    if (lateRound) return lateRound
    const end = await processToolCalls(calls)
    if (end !== 'done') return { kind: end }
    if (over) return over
  }
}

/**
 * One model request; a rejected one is compacted once (recovery) and retried, and fails the
 * turn blocked when that does not help. Answers the step with the number of transcript
 * messages the request carried (a recovery retry carries fewer), or how the turn ends.
 */
async function requestWithRecovery(
  ctx: TurnLoopContext,
  settings: ResolvedModelSettings,
  offer: Exclude<OfferedTools, { refused: string }>,
): Promise<(ModelStepResult & { sent: number }) | TurnEnd> {
  const { compaction } = ctx
  try {
    return await sendInTime(ctx, settings, offer)
  } catch (error) {
    const failure = modelFailure(error)
    const verdict =
      failure.code === 'model_error' && compaction ? await compaction.recover(failure) : 'none'
    if (verdict === 'none') return { kind: 'failed', message: failure.message }
    if (verdict === 'paused') return { kind: 'waiting' }
    if (verdict === 'blocked' || !compaction) return blocked(compaction, failure)
    try {
      return await sendInTime(ctx, settings, offer)
    } catch (again) {
      return blocked(compaction, modelFailure(again))
    }
  }
}

/** The turn stays open, paused, when the invocation's time is too short for another step. */
function pausedBeforeDeadline(ctx: TurnLoopContext): TurnEnd | undefined {
  const notice = pauseBeforeDeadline(ctx.deadline?.timeLeft)
  if (!notice) return undefined
  ctx.calls.warnings.push(notice)
  return { kind: 'waiting' }
}

/** `send`, stopped shortly before the invocation's time runs out: then the turn pauses. */
async function sendInTime(
  ctx: TurnLoopContext,
  settings: ResolvedModelSettings,
  offer: Exclude<OfferedTools, { refused: string }>,
): Promise<(ModelStepResult & { sent: number }) | TurnEnd> {
  const deadline =
    ctx.deadline && deadlineWatch(ctx.deadline.clock, ctx.deadline.timeLeft, ctx.signal)
  try {
    const signal = deadline?.signal ?? ctx.signal
    return await send({ ...ctx, ...(signal ? { signal } : {}) }, settings, offer)
  } catch (error) {
    if (!deadline?.reached()) throw error
    ctx.calls.warnings.push(MODEL_CALL_STOPPED)
    return { kind: 'waiting' }
  } finally {
    deadline?.clear()
  }
}

async function send(
  ctx: TurnLoopContext,
  settings: ResolvedModelSettings,
  offer: Exclude<OfferedTools, { refused: string }>,
) {
  const { turn, calls } = ctx
  const { state, open } = turn
  const sent = calls.history.length
  // One cache key for every request of the session's request segment.
  const cacheKey = await promptCacheKey(calls.hookContext.sessionId, state.compaction?.segment)
  const step = await runModelStep({
    dispatcher: calls.dispatcher,
    nextItemId: calls.nextItemId,
    // Named by the session's request count: a retried request is the same call.
    model: ctx.model(`${open.turn_id}/request-${state.model_requests + 1}`),
    request: {
      model: settings.name,
      api: settings.api,
      messages: requestMessages(state, calls.history),
      ...offer,
      ...requestSettings(settings),
      ...(state.config.output_schema ? { outputSchema: state.config.output_schema } : {}),
      promptCacheKey: cacheKey,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    },
    heartbeat: ctx.heartbeat,
  })
  return { ...step, sent }
}

/** A response, accounted (`response_accounted`) and appended to the transcript. */
function accountResponse(
  ctx: TurnLoopContext,
  settings: ResolvedModelSettings,
  step: ModelStepResult & { sent: number },
): void {
  const { turn, calls } = ctx
  const { response } = step
  ctx.compaction?.observe(response.usage.input_tokens, step.sent)
  const price = sessionPrice(settings)
  const costUsd = addCost(turn.state, response.usage, price)
  const notices = budgetNotices(
    { ...turn.state, cost_usd: costUsd },
    { name: settings.name, priced: price !== undefined },
  )
  turn.apply({
    type: 'response_accounted',
    usage: response.usage,
    reasoningTokens: response.reasoningTokens,
    // Tokens the adapter estimated because the provider reported none.
    estimatedTokens: response.usageEstimated
      ? response.usage.input_tokens + response.usage.output_tokens
      : undefined,
    costUsd,
    stopReason: response.stopReason ? normalizeStopReason(response.stopReason) : undefined,
    text: response.text,
    pricingWarned: notices.pricingWarned,
    budgetWarned: notices.budgetWarned,
  })
  ctx.onModelCall?.()
  calls.history.push(assistantMessage(response))
  calls.warnings.push(...notices.notices)
}

const MODEL_NOT_CONFIGURED =
  'No model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible ' +
  'server such as Ollama or vLLM) and TURNLINE_MODEL, or pass "model" when creating the session.'

/** A model fault as a TurnlineError; anything else is not ours to handle and is rethrown. */
function modelFailure(error: unknown): TurnlineError {
  if (isTurnlineError(error, 'model_error', 'model_not_configured')) return error
  throw error
}

function blocked(compaction: TurnCompaction | undefined, error: TurnlineError): TurnEnd {
  return compaction ? compaction.blocked(error) : { kind: 'failed', message: error.message }
}

function requestMessages(state: EngineState, history: HistoryMessage[]): HistoryMessage[] {
  const system = systemPrompt(state)
  return system ? [{ role: 'system', content: system }, ...history] : history
}
