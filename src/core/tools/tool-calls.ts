import type { PendingCall } from '../../contract/engine-state.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { HookConfig } from '../../contract/hook-config.ts'
import type { JsonValue } from '../../contract/json-value.ts'
import type { Telemetry } from '../../ports/telemetry.ts'
import type { EventDispatcher } from '../engine/event-dispatcher.ts'
import { notRunOutput, toolCallLimitReached } from '../guardrails/tool-call-limit.ts'
import type { HookContext } from '../hooks/hook-payloads.ts'
import { postToolUsePayload } from '../hooks/hook-payloads.ts'
import type { HookRunnerDeps } from '../hooks/run-hooks.ts'
import { hookWarnings, runHooks } from '../hooks/run-hooks.ts'
import { parseLoose } from '../model/model-step.ts'
import type { PermissionPolicy } from '../permissions/permission-policy.ts'
import {
  rejectedToolEvents,
  rejectionDetail,
  rejectionToolMessage,
} from '../permissions/rejected-tool.ts'
import { gateToolCall } from '../permissions/tool-gate.ts'
import type { TurnMachine } from '../turn/turn-machine.ts'
import { CLIENT_TOOL_KIND } from './client-tool-handler.ts'
import { checkArguments } from './tool-arguments.ts'
import type { ToolRunContext, ToolRunResult } from './tool-handler.ts'
import type { ToolRegistry } from './tool-registry.ts'
import { INTERRUPTED_OUTPUT, recordToolResult } from './tool-result.ts'
import { toolSpan } from './tool-span.ts'

export interface ToolCallContext {
  /** The open turn; its pending calls change only through its transitions. */
  turn: TurnMachine
  dispatcher: EventDispatcher
  history: HistoryMessage[]
  tools: ToolRegistry
  policy: PermissionPolicy
  hooks: readonly HookConfig[]
  hookDeps: HookRunnerDeps
  hookContext: HookContext
  warnings: string[]
  runContext: (call: PendingCall) => ToolRunContext
  nextItemId: () => string
  now: () => number
  /** Commits the turn so far (the invocations before their side effects). */
  checkpoint: () => Promise<void>
  /** Where each call's `execute_tool` span goes (none: not recorded). */
  telemetry?: Telemetry | undefined
  /** Pauses the round (true) when the platform's timeout is too near for another call. */
  pauseBeforeCall?: () => boolean
}

export type ToolCallsEnd = 'done' | 'awaiting_approval' | 'waiting'

/**
 * Works through the open turn's pending calls in order: a server-run call past
 * `harness.max_tool_calls` is not run; unknown tool or invalid arguments → invalid_tool; the
 * permission policy and `pre_tool_use` hooks (deny → rejected; ask → `awaiting_approval`); then
 * the run. The turn is committed `tools_running` before the first run, so a crash after it reports
 * the calls interrupted, not re-run; the invocation's end or the platform's timeout: `waiting`.
 */
export async function processToolCalls(ctx: ToolCallContext): Promise<ToolCallsEnd> {
  const { turn } = ctx
  if (turn.open.waiting) {
    const resumed = await resumeWaiting(ctx)
    if (resumed !== 'done') return resumed
  }
  while (turn.open.pending_calls.length > 0) {
    if (ctx.pauseBeforeCall?.()) return 'waiting'
    const stopped = await nextCall(ctx, turn.open.pending_calls[0] as PendingCall)
    if (stopped) return stopped
  }
  turn.apply({ type: 'tools_settled' })
  return 'done'
}

/** The first pending call, settled or run; how the turn stops for it, if it does (one approved
 * after a stop, or left by a paused round, is marked running again in this invocation). */
async function nextCall(
  ctx: ToolCallContext,
  call: PendingCall,
): Promise<Exclude<ToolCallsEnd, 'done'> | undefined> {
  const { turn } = ctx
  const { open } = turn
  const checked = checkedCall(ctx, call)
  if (!checked) return undefined
  const { handler, parsed } = checked

  const decided = open.approval?.item_id === call.item_id ? open.approval : undefined
  if (decided && decided.decision !== 'allow') {
    reject(ctx, call, decided.decision, decided.message)
    turn.apply({ type: 'approval_used' })
    turn.apply({ type: 'call_settled', itemId: call.item_id })
    return undefined
  }
  const gate = await gateToolCall({
    policy: ctx.policy,
    call,
    traits: { readOnly: handler.readOnly, aliases: handler.ruleNames },
    approved: decided?.decision === 'allow',
    hooks: ctx.hooks,
    hookDeps: ctx.hookDeps,
    hookContext: ctx.hookContext,
    now: ctx.now(),
    nextItemId: ctx.nextItemId,
  })
  if (gate.kind === 'ask') {
    ctx.dispatcher.emit(gate.event)
    turn.apply({ type: 'permission_requested', pending: gate.pending })
    return 'awaiting_approval'
  }
  turn.apply({ type: 'approval_used' })
  if (gate.kind === 'reject') {
    ctx.warnings.push(...gate.warnings)
    for (const event of gate.events) ctx.dispatcher.emit(event)
    ctx.history.push(gate.toolMessage)
    turn.apply({ type: 'call_settled', itemId: call.item_id })
    return undefined
  }
  ctx.warnings.push(...gate.warnings)
  if (decided || (!open.tools_running && !ctx.dispatcher.pendingCount))
    ctx.dispatcher.emit(runningSnapshot(call))
  if (handler.kind !== CLIENT_TOOL_KIND) turn.apply({ type: 'call_started' })
  if (!open.tools_running) {
    turn.apply({ type: 'tools_started' })
    await ctx.checkpoint()
  }
  const result = await toolSpan(ctx.telemetry, call, handler.kind, () =>
    handler.run(parsed.value, ctx.runContext(call)),
  )
  if (result.kind === 'pending') {
    turn.apply({ type: 'call_waiting', itemId: call.item_id, resume: resumeOf(result) })
    ctx.dispatcher.emit(runningSnapshot(call))
    return 'waiting'
  }
  await finishCall(ctx, call, result)
  return undefined
}

/**
 * The call's handler and arguments; a server-run call past `harness.max_tool_calls` settles
 * `cancelled`, not run; an unknown tool or invalid arguments settle it `invalid_tool`.
 */
function checkedCall(ctx: ToolCallContext, call: PendingCall) {
  const handler = ctx.tools.get(call.tool_name)
  // A client's function gets the arguments as the model wrote them: the client checks them.
  if (handler?.kind === CLIENT_TOOL_KIND) return { handler, parsed: { value: {} } }
  const { config } = ctx.turn.state
  if (handler && toolCallLimitReached(config, ctx.turn.open)) {
    recordToolResult(ctx.dispatcher, ctx.history, call, 'failed', 'cancelled', notRunOutput(config))
    ctx.turn.apply({ type: 'call_settled', itemId: call.item_id })
    return undefined
  }
  const parsed = handler ? checkArguments(call.arguments, handler.definition.parameters) : undefined
  if (handler && parsed?.ok) return { handler, parsed }
  const why = !handler
    ? `unknown tool ${JSON.stringify(call.tool_name)}; available: ${ctx.tools.names.join(', ') || 'none'}`
    : parsed && !parsed.ok
      ? parsed.reason
      : 'invalid arguments'
  recordToolResult(ctx.dispatcher, ctx.history, call, 'failed', 'invalid_tool', why)
  ctx.turn.apply({ type: 'call_settled', itemId: call.item_id })
  return undefined
}

function resumeOf(result: Extract<ToolRunResult, { kind: 'pending' }>) {
  return result.resume as Record<string, JsonValue>
}

/** A call whose run was still going when an earlier invocation returned `waiting`. */
async function resumeWaiting(ctx: ToolCallContext): Promise<ToolCallsEnd> {
  const { turn } = ctx
  const waiting = turn.open.waiting
  const call = turn.open.pending_calls.find((c) => c.item_id === waiting?.item_id)
  const handler = call && ctx.tools.get(call.tool_name)
  if (!waiting || !call || !handler?.resume) {
    turn.apply({ type: 'wait_dropped' })
    if (call) {
      recordToolResult(
        ctx.dispatcher,
        ctx.history,
        call,
        'failed',
        'error',
        'the wait could not be resumed',
      )
      turn.apply({ type: 'call_settled', itemId: call.item_id })
    }
    return 'done'
  }
  // The snapshot of the invocation marks the wait going on in this invocation.
  ctx.dispatcher.emit(runningSnapshot(call))
  let result: ToolRunResult
  try {
    const resume = handler.resume.bind(handler)
    result = await toolSpan(ctx.telemetry, call, handler.kind, () =>
      resume(waiting.resume, ctx.runContext(call)),
    )
  } catch (error) {
    if (!isTurnlineError(error, 'runner_unavailable')) throw error
    // Honest: the command's fate is unknown, it is not started again, and the model is told.
    result = {
      kind: 'done',
      ok: false,
      output: `the sandbox runner is unavailable (${error.message}); the command's result is unknown and it was not run again`,
    }
  }
  if (result.kind === 'pending') {
    turn.apply({ type: 'call_waiting', itemId: call.item_id, resume: resumeOf(result) })
    return 'waiting'
  }
  await finishCall(ctx, call, result)
  return 'done'
}

/** An `item.updated` snapshot of a call that is (still) running. */
function runningSnapshot(call: PendingCall) {
  return {
    type: 'item.updated' as const,
    item: {
      id: call.item_id,
      type: 'tool_invocation' as const,
      tool_name: call.tool_name,
      arguments: parseLoose(call.arguments),
      tool_call_id: call.tool_call_id,
      status: 'in_progress' as const,
    },
  }
}

/** Records a finished run (items, transcript) and fires `post_tool_use`. */
export async function finishCall(
  ctx: ToolCallContext,
  call: PendingCall,
  result: Extract<ToolRunResult, { kind: 'done' }>,
): Promise<void> {
  recordToolResult(
    ctx.dispatcher,
    ctx.history,
    call,
    result.ok ? 'completed' : 'failed',
    result.ok ? 'success' : 'error',
    result.output,
    {
      ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
      ...(result.spoolPath !== undefined ? { spoolPath: result.spoolPath } : {}),
    },
  )
  for (const event of result.events ?? []) ctx.dispatcher.emit(event)
  ctx.turn.apply({ type: 'call_settled', itemId: call.item_id })
  const outcome = await runHooks(
    'post_tool_use',
    postToolUsePayload(ctx.hookContext, {
      toolName: call.tool_name,
      toolInput: parseLoose(call.arguments),
      toolCallId: call.tool_call_id,
      toolResponse: result.output,
    }),
    ctx.hooks,
    ctx.hookDeps,
    ctx.tools.get(call.tool_name)?.ruleNames,
  )
  ctx.warnings.push(...hookWarnings('post_tool_use', outcome))
}

/** Calls committed before a crash whose result never was: reported failed, never re-run. */
export function resolveInterrupted(ctx: Pick<ToolCallContext, 'turn' | 'dispatcher' | 'history'>) {
  for (const call of ctx.turn.open.pending_calls) {
    recordToolResult(ctx.dispatcher, ctx.history, call, 'failed', 'error', INTERRUPTED_OUTPUT)
  }
  ctx.turn.apply({ type: 'calls_abandoned' })
  ctx.turn.apply({ type: 'tools_settled' })
}

function reject(
  ctx: ToolCallContext,
  call: PendingCall,
  decision: 'deny' | 'cancelled' | 'followup',
  message: string | undefined,
): void {
  const outcome =
    decision === 'deny'
      ? 'permission_rejected'
      : decision === 'cancelled'
        ? 'permission_cancelled'
        : 'followup'
  const detail = rejectionDetail(
    outcome,
    call.tool_name,
    decision === 'deny' ? 'the user denied it' : undefined,
  )
  for (const event of rejectedToolEvents({
    call,
    outcome,
    detail,
    errorItemId: ctx.nextItemId(),
  })) {
    ctx.dispatcher.emit(event)
  }
  ctx.history.push(rejectionToolMessage(call, detail))
  if (decision === 'followup' && message) ctx.history.push({ role: 'user', content: message })
}
