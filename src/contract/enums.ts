import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * Enums of the VT Code event schema 0.11.0, with their exact wire strings.
 *
 * Two kinds:
 * - closed enums reject any other string (VT Code has no catch-all variant);
 * - open enums accept any other string on read (VT Code maps it to its `Unknown` variant). We keep
 *   the original string, branded as {@link UnknownEnumValue}, so a parsed line re-serializes
 *   byte-identically. Values we write are always one of the known literals.
 */

/** A string read from the wire that is not one of an open enum's known values. */
export type UnknownEnumValue = string & z.$brand<'UnknownEnumValue'>

type Values = readonly [string, ...string[]]

/** Read schema of an open enum: a known literal, or any other string kept as it was. */
function openEnum<const T extends Values>(values: T) {
  return z.union([z.enum(values), z.string().brand<'UnknownEnumValue'>()])
}

/** True when `value` is one of `values` (narrows an open-enum read value to the known literals). */
export function isKnownValue<const T extends Values>(values: T, value: string): value is T[number] {
  return (values as readonly string[]).includes(value)
}

// --- open enums (catch-all on read) --------------------------------------------------------------

export const THREAD_COMPLETION_SUBTYPES = [
  'success',
  'error_max_turns',
  'error_max_budget_usd',
  'error_during_execution',
  'cancelled',
] as const
export type ThreadCompletionSubtype = (typeof THREAD_COMPLETION_SUBTYPES)[number]
export const ThreadCompletionSubtypeSchema = lazySchema(() => openEnum(THREAD_COMPLETION_SUBTYPES))

export const COMPACTION_TRIGGERS = ['manual', 'auto', 'recovery', 'model_switch'] as const
export type CompactionTrigger = (typeof COMPACTION_TRIGGERS)[number]
export const CompactionTriggerSchema = lazySchema(() => openEnum(COMPACTION_TRIGGERS))

export const COMPACTION_MODES = ['provider', 'local'] as const
export type CompactionMode = (typeof COMPACTION_MODES)[number]
export const CompactionModeSchema = lazySchema(() => openEnum(COMPACTION_MODES))

export const CONTEXT_RESET_TRIGGERS = ['plan_approval'] as const
export type ContextResetTrigger = (typeof CONTEXT_RESET_TRIGGERS)[number]
export const ContextResetTriggerSchema = lazySchema(() => openEnum(CONTEXT_RESET_TRIGGERS))

export const PLAN_APPROVAL_DECISIONS = [
  'execute',
  'auto_accept',
  'fresh_context',
  'revise',
  'cancel',
  'switch_build',
  'switch_auto',
] as const
export type PlanApprovalDecision = (typeof PLAN_APPROVAL_DECISIONS)[number]
export const PlanApprovalDecisionSchema = lazySchema(() => openEnum(PLAN_APPROVAL_DECISIONS))

/** The string VT Code itself writes for its catch-all variant of every open enum. */
export const UNKNOWN_ENUM_WIRE_VALUE = 'unknown'

// --- closed enums ---------------------------------------------------------------------------------

export const COMMAND_EXECUTION_STATUSES = ['completed', 'failed', 'in_progress'] as const
export const CommandExecutionStatusSchema = lazySchema(() => z.enum(COMMAND_EXECUTION_STATUSES))
export type CommandExecutionStatus = z.infer<typeof CommandExecutionStatusSchema>

export const TOOL_CALL_STATUSES = ['completed', 'failed', 'in_progress'] as const
export const ToolCallStatusSchema = lazySchema(() => z.enum(TOOL_CALL_STATUSES))
export type ToolCallStatus = z.infer<typeof ToolCallStatusSchema>

export const TOOL_OUTCOMES = [
  'success',
  'error',
  'permission_rejected',
  'permission_cancelled',
  'followup',
  'hook_denied',
  'invalid_tool',
  'cancelled',
] as const
export const ToolOutcomeSchema = lazySchema(() => z.enum(TOOL_OUTCOMES))
export type ToolOutcome = z.infer<typeof ToolOutcomeSchema>

export const PATCH_APPLY_STATUSES = ['completed', 'failed'] as const
export const PatchApplyStatusSchema = lazySchema(() => z.enum(PATCH_APPLY_STATUSES))
export type PatchApplyStatus = z.infer<typeof PatchApplyStatusSchema>

export const PATCH_CHANGE_KINDS = ['add', 'delete', 'update'] as const
export const PatchChangeKindSchema = lazySchema(() => z.enum(PATCH_CHANGE_KINDS))
export type PatchChangeKind = z.infer<typeof PatchChangeKindSchema>

export const MCP_TOOL_CALL_STATUSES = ['started', 'completed', 'failed'] as const
export const McpToolCallStatusSchema = lazySchema(() => z.enum(MCP_TOOL_CALL_STATUSES))
export type McpToolCallStatus = z.infer<typeof McpToolCallStatusSchema>

export const HARNESS_EVENT_KINDS = [
  'planning_started',
  'planning_completed',
  'continuation_started',
  'continuation_skipped',
  'blocked_handoff_written',
  'evaluation_started',
  'evaluation_passed',
  'evaluation_failed',
  'revision_started',
  'escalation_triggered',
  'escalation_bypassed',
  'verification_started',
  'verification_passed',
  'verification_failed',
  'error_recovered',
  'tool_retry_attempted',
  'tool_latency_recorded',
  'snapshot_created',
  'snapshot_restored',
] as const
export const HarnessEventKindSchema = lazySchema(() => z.enum(HARNESS_EVENT_KINDS))
export type HarnessEventKind = z.infer<typeof HarnessEventKindSchema>

/** `permission.resolved.decision`. */
export const PERMISSION_DECISIONS = ['allow', 'deny', 'cancelled', 'followup'] as const
export const PermissionDecisionSchema = lazySchema(() => z.enum(PERMISSION_DECISIONS))
export type PermissionDecision = z.infer<typeof PermissionDecisionSchema>

/** `interjected.source`. */
export const INTERJECTION_SOURCES = ['direct', 'queue'] as const
export const InterjectionSourceSchema = lazySchema(() => z.enum(INTERJECTION_SOURCES))
export type InterjectionSource = z.infer<typeof InterjectionSourceSchema>

/** `interjected.redirect_kind`. */
export const REDIRECT_KINDS = ['interjection'] as const
export const RedirectKindSchema = lazySchema(() => z.enum(REDIRECT_KINDS))
export type RedirectKind = z.infer<typeof RedirectKindSchema>
