import type { EngineState, OpenTurn } from '../../contract/engine-state.ts'
import { isTurnlineError, type TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import { addUsage } from '../../contract/usage.ts'
import type { ModelClient } from '../../ports/model-client.ts'
import type { TurnCompaction } from '../compaction/turn-compaction.ts'
import type { Completion } from '../engine/thread-completion.ts'
import { budgetNotices, reachedStop } from '../guardrails/stop-conditions.ts'
import { assistantMessage } from '../model/assistant-message.ts'
import { addCost, sessionPrice } from '../model/budget.ts'
import type { ResolvedModelSettings } from '../model/model-settings.ts'
import { requestSettings } from '../model/model-settings.ts'
import { runModelStep } from '../model/model-step.ts'
import { normalizeStopReason } from '../model/stop-reason.ts'
import { systemPrompt } from '../orientation/system-prompt.ts'
import type { ToolCallContext } from '../tools/tool-calls.ts'
import { processToolCalls, resolveInterrupted } from '../tools/tool-calls.ts'

export interface TurnLoopContext {
  /** Mutated in place: usage, counters, cost, last text, open turn. */
  state: EngineState
  open: OpenTurn
  /** The client of one model request, named within the session (reserved and settled). */
  model: (step: string) => ModelClient
  settings: ResolvedModelSettings | undefined
  /** Tool processing (registry, permissions, hooks, runs); shares dispatcher and history. */
  calls: ToolCallContext
  heartbeat: () => Promise<void>
  /** Thresholds, recovery and segments (see compaction-step.ts); absent = none. */
  compaction?: TurnCompaction
  signal?: AbortSignal
  /** Told of every model request made (operator metrics). */
  onModelCall?: () => void
}

export type TurnEnd =
  | { kind: 'completed' }
  | { kind: 'awaiting_approval' }
  | { kind: 'waiting' }
  | { kind: 'failed'; message: string }
  | ({ kind: 'terminal'; message: string } & Completion)

/** The model ↔ tool loop of one turn, from wherever the open turn stands. */
export async function runTurnLoop(ctx: TurnLoopContext): Promise<TurnEnd> {
  const { state, open, calls } = ctx
  const { dispatcher, history } = calls
  const compaction = ctx.compaction
  if (open.pending_calls.length > 0) {
    if (open.tools_running && !open.waiting) resolveInterrupted(calls)
    const end = await processToolCalls(calls)
    if (end !== 'done') return { kind: end }
  }
  await compaction?.start()
  for (;;) {
    // Every limit (guardrails/stop-conditions.ts): before the request, and after its response.
    const stop = reachedStop({ state, open, at: 'before_request' })
    if (stop) return stop
    if (!ctx.settings) {
      return { kind: 'failed', message: MODEL_NOT_CONFIGURED }
    }

    await compaction?.beforeRequest()
    const settings = ctx.settings
    /** Transcript messages the request carried (a recovery retry carries fewer). */
    let sent = 0
    const send = () => {
      sent = history.length
      return runModelStep({
        dispatcher,
        nextItemId: calls.nextItemId,
        // Named by the session's request count: a retried request is the same call.
        model: ctx.model(`${open.turn_id}/request-${state.model_requests + 1}`),
        request: {
          model: settings.name,
          api: settings.api,
          messages: requestMessages(state, history),
          tools: calls.tools.catalog,
          ...requestSettings(settings),
          ...(state.config.output_schema ? { outputSchema: state.config.output_schema } : {}),
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        },
        heartbeat: ctx.heartbeat,
      })
    }
    let step: Awaited<ReturnType<typeof runModelStep>>
    try {
      step = await send()
    } catch (error) {
      const failure = modelFailure(error)
      const verdict =
        failure.code === 'model_error' && compaction ? await compaction.recover(failure) : 'none'
      if (verdict === 'none') return { kind: 'failed', message: failure.message }
      if (verdict === 'blocked' || !compaction) return blocked(compaction, failure)
      try {
        step = await send()
      } catch (again) {
        return blocked(compaction, modelFailure(again))
      }
    }

    const { response } = step
    compaction?.observe(response.usage.input_tokens, sent)
    state.model_requests += 1
    ctx.onModelCall?.()
    state.usage = addUsage(state.usage, response.usage)
    if (response.reasoningTokens) {
      state.reasoning_tokens = (state.reasoning_tokens ?? 0) + response.reasoningTokens
    }
    if (response.usageEstimated) {
      const { input_tokens, output_tokens } = response.usage
      state.estimated_tokens = (state.estimated_tokens ?? 0) + input_tokens + output_tokens
    }
    open.usage = addUsage(open.usage, response.usage)
    const price = sessionPrice(ctx.settings)
    state.cost_usd = addCost(state, response.usage, price)
    if (response.stopReason) state.last_stop_reason = normalizeStopReason(response.stopReason)
    if (response.text) state.last_assistant_text = response.text
    history.push(assistantMessage(response))

    const notices = budgetNotices(state, { name: ctx.settings.name, priced: price !== undefined })
    state.pricing_warned = notices.pricingWarned
    state.budget_warned = notices.budgetWarned
    calls.warnings.push(...notices.notices)
    const over = reachedStop({ state, open, at: 'after_response' })
    if (step.tools.length === 0) return over ?? { kind: 'completed' }
    open.tool_loops += 1
    open.pending_calls = step.tools.map(({ itemId, call }) => ({
      item_id: itemId,
      tool_call_id: call.id,
      tool_name: call.name,
      arguments: call.arguments,
    }))
    const end = await processToolCalls(calls)
    if (end !== 'done') return { kind: end }
    if (over) return over
  }
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
