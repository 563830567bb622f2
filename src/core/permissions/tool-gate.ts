import type { PendingCall } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { HookConfig } from '../../contract/hook-config.ts'
import type { JsonValue } from '../../contract/json-value.ts'
import type { PermissionRequestedEvent } from '../../contract/permission-and-plan-events.ts'
import type { PendingPermission } from '../../contract/permission-resolution.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import { type HookContext, preToolUsePayload } from '../hooks/hook-payloads.ts'
import { type HookResult, type HookRunnerDeps, hookWarnings, runHooks } from '../hooks/run-hooks.ts'
import { parseLoose } from '../model/model-step.ts'
import { evaluatePermission, type PermissionPolicy, type ToolTraits } from './permission-policy.ts'
import { rejectedToolEvents, rejectionDetail, rejectionToolMessage } from './rejected-tool.ts'
import { requestPermission } from './resolve-permission.ts'

/**
 * Everything between "the model called a tool" and "run it", in order: the permission policy
 * (deny → rejected; ask → wait for a human), then the `pre_tool_use` hooks (a blocking deny →
 * rejected). A call a human already allowed skips the policy but still passes the hooks.
 */

export interface ToolGateInput {
  policy: PermissionPolicy
  call: PendingCall
  /** The tool definition's `read_only` and the other names a rule may give it (ruleNames). */
  traits: ToolTraits
  /** True when `permission.resolved{decision:"allow"}` was recorded for this call. */
  approved?: boolean
  hooks: readonly HookConfig[]
  hookDeps: HookRunnerDeps
  hookContext: HookContext
  /** Epoch ms, for `requested_at`. */
  now: number
  /** The engine's item counter (`item_<n>`), for the error item of a rejection. */
  nextItemId: () => string
}

export type ToolGate =
  | { kind: 'run'; hookResults: HookResult[]; warnings: string[] }
  | { kind: 'ask'; pending: PendingPermission; event: PermissionRequestedEvent }
  | {
      kind: 'reject'
      outcome: 'permission_rejected' | 'hook_denied'
      /** Emit in order; then append `toolMessage` to the transcript. */
      events: ThreadEvent[]
      toolMessage: HistoryMessage
      hookResults: HookResult[]
      warnings: string[]
    }

export async function gateToolCall(input: ToolGateInput): Promise<ToolGate> {
  const { call } = input
  if (!input.approved) {
    const verdict = evaluatePermission(input.policy, call.tool_name, input.traits)
    if (verdict.decision === 'ask') return { kind: 'ask', ...requestPermission(call, input.now) }
    if (verdict.decision === 'deny') {
      return reject(input, 'permission_rejected', verdict.reason, [], [])
    }
  }
  const outcome = await runHooks(
    'pre_tool_use',
    preToolUsePayload(input.hookContext, {
      toolName: call.tool_name,
      toolInput: parseLoose(call.arguments) as JsonValue,
      toolCallId: call.tool_call_id,
    }),
    input.hooks,
    input.hookDeps,
    input.traits.aliases,
  )
  const warnings = hookWarnings('pre_tool_use', outcome)
  if (outcome.denied) {
    return reject(input, 'hook_denied', outcome.denied.reason, outcome.results, warnings)
  }
  return { kind: 'run', hookResults: outcome.results, warnings }
}

function reject(
  input: ToolGateInput,
  outcome: 'permission_rejected' | 'hook_denied',
  reason: string,
  hookResults: HookResult[],
  warnings: string[],
): ToolGate {
  const detail = rejectionDetail(outcome, input.call.tool_name, reason)
  return {
    kind: 'reject',
    outcome,
    events: rejectedToolEvents({
      call: input.call,
      outcome,
      detail,
      errorItemId: input.nextItemId(),
    }),
    toolMessage: rejectionToolMessage(input.call, detail),
    hookResults,
    warnings,
  }
}
