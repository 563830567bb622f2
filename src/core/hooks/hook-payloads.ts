import type { CompactionMode, CompactionTrigger } from '../../contract/enums.ts'
import type { HookEvent, SessionStartSource } from '../../contract/hook-config.ts'
import type { JsonValue } from '../../contract/json-value.ts'

/**
 * The JSON a hook receives (HTTP body / command stdin), as VT Code builds it: the base fields
 * `session_id`, `cwd`, `hook_event_name`, `transcript_path` (string or null), then the event's
 * own fields, in this order.
 */

/** VT Code's `hook_event_name` of each event. */
export const HOOK_EVENT_NAMES = {
  session_start: 'SessionStart',
  pre_compact: 'PreCompact',
  pre_tool_use: 'PreToolUse',
  post_tool_use: 'PostToolUse',
  stop: 'Stop',
} as const satisfies Record<HookEvent, string>

export interface HookContext {
  sessionId: string
  /** The project directory (the sandbox's workspace path). */
  cwd: string
  /** Where the transcript can be read (e.g. the events.jsonl key or URL); null when none. */
  transcriptPath?: string | null
}

interface Base<N extends string> {
  session_id: string
  cwd: string
  hook_event_name: N
  transcript_path: string | null
}

export interface SessionStartPayload extends Base<'SessionStart'> {
  source: SessionStartSource
}

export interface PreCompactPayload extends Base<'PreCompact'> {
  trigger: CompactionTrigger
  mode: CompactionMode
  original_message_count: number
  compacted_message_count: number
  /** Always null at this call site in VT Code (the artifact is written afterwards). */
  history_artifact_path: string | null
}

export interface PreToolUsePayload extends Base<'PreToolUse'> {
  tool_name: string
  tool_input: JsonValue
  tool_call_id: string | null
}

export interface PostToolUsePayload extends Base<'PostToolUse'> {
  tool_name: string
  tool_input: JsonValue
  tool_response: JsonValue
  tool_call_id: string | null
}

export interface StopPayload extends Base<'Stop'> {
  last_assistant_message: string
  stop_hook_active: boolean
}

export interface HookPayloads {
  session_start: SessionStartPayload
  pre_compact: PreCompactPayload
  pre_tool_use: PreToolUsePayload
  post_tool_use: PostToolUsePayload
  stop: StopPayload
}

export type HookPayload = HookPayloads[HookEvent]

function base<E extends HookEvent>(ctx: HookContext, event: E): Base<(typeof HOOK_EVENT_NAMES)[E]> {
  return {
    session_id: ctx.sessionId,
    cwd: ctx.cwd,
    hook_event_name: HOOK_EVENT_NAMES[event],
    transcript_path: ctx.transcriptPath ?? null,
  }
}

export function sessionStartPayload(
  ctx: HookContext,
  source: SessionStartSource,
): SessionStartPayload {
  return { ...base(ctx, 'session_start'), source }
}

export function preCompactPayload(
  ctx: HookContext,
  compaction: {
    trigger: CompactionTrigger
    mode: CompactionMode
    originalMessageCount: number
    compactedMessageCount: number
    historyArtifactPath?: string | null
  },
): PreCompactPayload {
  return {
    ...base(ctx, 'pre_compact'),
    trigger: compaction.trigger,
    mode: compaction.mode,
    original_message_count: compaction.originalMessageCount,
    compacted_message_count: compaction.compactedMessageCount,
    history_artifact_path: compaction.historyArtifactPath ?? null,
  }
}

export function preToolUsePayload(
  ctx: HookContext,
  call: { toolName: string; toolInput: JsonValue; toolCallId?: string | null },
): PreToolUsePayload {
  return {
    ...base(ctx, 'pre_tool_use'),
    tool_name: call.toolName,
    tool_input: call.toolInput,
    tool_call_id: call.toolCallId ?? null,
  }
}

export function postToolUsePayload(
  ctx: HookContext,
  call: {
    toolName: string
    toolInput: JsonValue
    toolResponse: JsonValue
    toolCallId?: string | null
  },
): PostToolUsePayload {
  return {
    ...base(ctx, 'post_tool_use'),
    tool_name: call.toolName,
    tool_input: call.toolInput,
    tool_response: call.toolResponse,
    tool_call_id: call.toolCallId ?? null,
  }
}

export function stopPayload(
  ctx: HookContext,
  stop: { lastAssistantMessage: string; stopHookActive?: boolean },
): StopPayload {
  return {
    ...base(ctx, 'stop'),
    last_assistant_message: stop.lastAssistantMessage,
    stop_hook_active: stop.stopHookActive ?? false,
  }
}

/** The value a hook's `matcher` is compared with (undefined: the event takes no matcher). */
export function matcherSubject(payload: HookPayload): string | undefined {
  switch (payload.hook_event_name) {
    case 'SessionStart':
      return payload.source
    case 'PreCompact':
      return payload.trigger
    case 'PreToolUse':
    case 'PostToolUse':
      return payload.tool_name
    case 'Stop':
      return undefined
  }
}
