import type { EngineState, OpenTurn, PendingCall } from '../contract/engine-state.ts'
import type { HistoryMessage } from '../contract/history-message.ts'
import type { HttpTool, ModelSettings } from '../contract/session-config.ts'
import { addUsage } from '../contract/usage.ts'
import { isTurnlineError } from '../errors.ts'
import type { ModelClient } from '../ports/model-client.ts'
import { addCost, checkBudget, pricingWarning, sessionPrice } from './budget.ts'
import type { EventDispatcher } from './event-dispatcher.ts'
import { callHttpTool } from './http-tool-call.ts'
import { runModelStep } from './model-step.ts'
import type { HttpToolPolicy } from './service-deps.ts'
import type { Completion } from './thread-completion.ts'
import { checkArguments } from './tool-arguments.ts'
import type { CatalogEntry } from './tool-catalog.ts'
import { INTERRUPTED_OUTPUT, recordToolResult } from './tool-result.ts'

export interface TurnLoopContext {
  tenant: string
  sessionId: string
  /** Mutated in place: usage, counters, cost, last text, open turn. */
  state: EngineState
  /** The segment transcript (mutated: the loop appends to it). */
  history: HistoryMessage[]
  open: OpenTurn
  dispatcher: EventDispatcher
  model: ModelClient
  settings: ModelSettings | undefined
  catalog: CatalogEntry[]
  tools: ReadonlyMap<string, HttpTool>
  policy: HttpToolPolicy
  now: () => number
  warnings: string[]
  heartbeat: () => Promise<void>
  /** Commits what happened so far (invocations before their side effects run). */
  checkpoint: () => Promise<void>
  signal?: AbortSignal
}

export type TurnEnd =
  | { kind: 'completed' }
  | { kind: 'failed'; message: string }
  | ({ kind: 'terminal'; message: string } & Completion)

/** The model ↔ tool loop of one turn, from wherever the open turn stands. */
export async function runTurnLoop(ctx: TurnLoopContext): Promise<TurnEnd> {
  const { state, open } = ctx
  if (open.pending_calls.length > 0) resolveInterrupted(ctx)
  for (;;) {
    const limits = state.config.limits
    if (limits.max_turns !== undefined && state.model_requests >= limits.max_turns) {
      return terminal(
        'error_max_turns',
        'turn_limit_reached',
        `turn limit reached: ${state.model_requests} of ${limits.max_turns} model requests used`,
      )
    }
    const before = checkBudget(state)
    if (before.status === 'exceeded') return overBudget(before.spent, before.max)
    if (open.tool_loops >= state.config.harness.max_tool_loops) {
      return {
        kind: 'failed',
        message: `tool loop limit reached: ${open.tool_loops} tool rounds in one turn`,
      }
    }
    if (!ctx.settings) {
      return { kind: 'failed', message: MODEL_NOT_CONFIGURED }
    }

    let step: Awaited<ReturnType<typeof runModelStep>>
    try {
      step = await runModelStep({
        dispatcher: ctx.dispatcher,
        nextItemId: () => `item_${state.item_counter++}`,
        model: ctx.model,
        request: {
          model: ctx.settings.name,
          api: ctx.settings.api,
          messages: requestMessages(state, ctx.history),
          tools: ctx.catalog.map((entry) => entry.definition),
          ...(ctx.settings.max_output_tokens
            ? { maxOutputTokens: ctx.settings.max_output_tokens }
            : {}),
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        },
        heartbeat: ctx.heartbeat,
      })
    } catch (error) {
      if (isTurnlineError(error, 'model_error', 'model_not_configured')) {
        return { kind: 'failed', message: error.message }
      }
      throw error
    }

    const { response } = step
    state.model_requests += 1
    state.usage = addUsage(state.usage, response.usage)
    open.usage = addUsage(open.usage, response.usage)
    const price = sessionPrice(ctx.settings)
    state.cost_usd = addCost(state, response.usage, price)
    if (!price && limits.max_budget_usd !== undefined && !state.pricing_warned) {
      state.pricing_warned = true
      ctx.warnings.push(pricingWarning(ctx.settings.name))
    }
    if (response.stopReason) state.last_stop_reason = response.stopReason
    if (response.text) state.last_assistant_text = response.text
    ctx.history.push({
      role: 'assistant',
      content: response.text,
      ...(response.toolCalls.length ? { tool_calls: response.toolCalls } : {}),
    })

    const after = checkBudget(state)
    if (after.status === 'warning') {
      state.budget_warned = true
      ctx.warnings.push(after.message)
    }
    if (step.tools.length === 0) {
      return after.status === 'exceeded'
        ? overBudget(after.spent, after.max)
        : { kind: 'completed' }
    }
    open.tool_loops += 1
    open.pending_calls = step.tools.map(({ itemId, call }) => ({
      item_id: itemId,
      tool_call_id: call.id,
      tool_name: call.name,
      arguments: call.arguments,
    }))
    await ctx.checkpoint()
    for (const call of open.pending_calls) await runTool(ctx, call)
    open.pending_calls = []
    if (after.status === 'exceeded') return overBudget(after.spent, after.max)
  }
}

const MODEL_NOT_CONFIGURED =
  'No model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible ' +
  'server such as Ollama or vLLM) and TURNLINE_MODEL, or pass "model" when creating the session.'

function terminal(
  subtype: 'error_max_turns',
  outcomeCode: 'turn_limit_reached',
  message: string,
): TurnEnd {
  return { kind: 'terminal', subtype, outcomeCode, message }
}

function overBudget(spent: number, max: number): TurnEnd {
  return {
    kind: 'terminal',
    subtype: 'error_max_budget_usd',
    outcomeCode: 'budget_limit_reached',
    message: `budget limit reached: spent $${spent.toFixed(4)} of $${max}`,
  }
}

function requestMessages(state: EngineState, history: HistoryMessage[]): HistoryMessage[] {
  const instructions = state.config.instructions
  return instructions ? [{ role: 'system', content: instructions }, ...history] : history
}

/** Runs one committed call and records invocation outcome, output item and tool message. */
async function runTool(ctx: TurnLoopContext, call: PendingCall): Promise<void> {
  const tool = ctx.tools.get(call.tool_name)
  let ok = false
  let outcome: 'success' | 'error' | 'invalid_tool' = 'invalid_tool'
  let output: string
  if (!tool) {
    output = `unknown tool ${JSON.stringify(call.tool_name)}; available: ${[...ctx.tools.keys()].join(', ') || 'none'}`
  } else {
    const check = checkArguments(call.arguments, tool.parameters)
    if (!check.ok) {
      output = check.reason
    } else {
      const result = await callHttpTool(
        ctx.policy,
        {
          tenant: ctx.tenant,
          sessionId: ctx.sessionId,
          toolCallId: call.tool_call_id,
          now: ctx.now(),
        },
        tool,
        check.value,
        ctx.signal,
      )
      ok = result.ok
      outcome = result.ok ? 'success' : 'error'
      output = result.output
    }
  }
  recordToolResult(ctx.dispatcher, ctx.history, call, ok ? 'completed' : 'failed', outcome, output)
}

/** Calls committed before a crash whose result never was: reported failed, never re-run. */
function resolveInterrupted(ctx: TurnLoopContext): void {
  for (const call of ctx.open.pending_calls) {
    recordToolResult(ctx.dispatcher, ctx.history, call, 'failed', 'error', INTERRUPTED_OUTPUT)
  }
  ctx.open.pending_calls = []
}
