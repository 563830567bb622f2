import * as z from 'zod'
import {
  CompactionModeSchema,
  CompactionTriggerSchema,
  ContextResetTriggerSchema,
  InterjectionSourceSchema,
  PermissionDecisionSchema,
  PlanApprovalDecisionSchema,
  RedirectKindSchema,
  ThreadCompletionSubtypeSchema,
} from './enums.ts'
import { U8Schema, U32Schema, U64Schema } from './integers.ts'
import { lazySchema } from './lazy-schema.ts'
import { ThreadItemSchema } from './thread-item.ts'
import { UsageSchema } from './usage.ts'

/**
 * VT Code `ThreadEvent` (event schema 0.11.0), internally tagged on `type`. Field order in every
 * schema is the serde declaration order (`type` first), which is the order the serializer writes.
 * Optional fields are omitted when absent and rejected when `null`. Event types this schema does
 * not know are read as {@link UnknownThreadEvent} (VT Code's `#[serde(other)]` catch-all).
 */

export const ThreadStartedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('thread.started').describe('Always `thread.started`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
  }),
)

export const ThreadCompletedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('thread.completed').describe('Always `thread.completed`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    session_id: z.string().describe('The session id.'),
    subtype: ThreadCompletionSubtypeSchema.describe(
      'How the thread ended (`success`, `cancelled`, `error_during_execution`, …).',
    ),
    outcome_code: z.string().describe('Machine-readable outcome of the thread.'),
    result: z
      .string()
      .optional()
      .describe('Only on success: the final summary / latest assistant text.'),
    stop_reason: z
      .string()
      .optional()
      .describe('Provider stop reason of the last model turn, or error text on failures.'),
    usage: UsageSchema.describe('Aggregate over the thread.'),
    total_cost_usd: z
      .number()
      .optional()
      .describe(
        'Estimated cost; omitted when pricing is unknown. Written as a JSON float (`2.0`, `1.25`).',
      ),
    num_turns: U64Schema.describe('Model requests over the thread.'),
  }),
)

export const ThreadCompactBoundaryEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('thread.compact_boundary').describe('Always `thread.compact_boundary`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    trigger: CompactionTriggerSchema.describe('What started it (`auto`, `manual`, …).'),
    mode: CompactionModeSchema.describe('How the summary was made (local or by the provider).'),
    original_message_count: U64Schema.describe('Messages in the transcript before compaction.'),
    compacted_message_count: U64Schema.describe('Messages in the transcript after compaction.'),
    history_artifact_path: z
      .string()
      .optional()
      .describe('Where the full transcript before compaction was archived.'),
    previous_segment_id: z.string().optional().describe('The request segment that ended.'),
    new_segment_id: z.string().optional().describe('The request segment that starts.'),
    previous_prefix_hash: z
      .string()
      .optional()
      .describe('Prompt-prefix hash of the segment that ended.'),
    new_prefix_hash: z.string().optional().describe('Prompt-prefix hash of the new segment.'),
    previous_catalog_hash: z
      .string()
      .optional()
      .describe('Tool-catalog hash of the segment that ended.'),
    new_catalog_hash: z.string().optional().describe('Tool-catalog hash of the new segment.'),
  }),
)

export const ContextResetEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('context.reset').describe('Always `context.reset`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    turn_id: z.string().describe('The turn (`turn-<n>`).'),
    trigger: ContextResetTriggerSchema.describe('What started it (`auto`, `manual`, …).'),
    plan_preserved: z.boolean().describe('Whether the plan was carried into the new context.'),
    previous_context_usage_percent: U8Schema.describe(
      'How full the context was before the reset (percent).',
    ),
    tool_budget_reset: z.boolean().describe('Whether the tool-call budget was reset.'),
  }),
)

/** Token attribution of the assembled first-request prefix (all u64). */
export const TokenBreakdownSchema = lazySchema(() =>
  z.object({
    system_prompt_tokens: U64Schema.describe('Tokens of the system prompt.'),
    tool_schema_tokens: U64Schema.describe('Tokens of the tool schemas.'),
    instruction_file_tokens: U64Schema.describe('Tokens of instruction files.'),
    message_history_tokens: U64Schema.describe('Tokens of the conversation history.'),
    cache_read_tokens: U64Schema.describe("Prompt tokens read from the provider's cache."),
    cache_write_tokens: U64Schema.describe("Prompt tokens written to the provider's cache."),
    cache_miss_tokens: U64Schema.describe('Prompt tokens not cached.'),
    subagent_bootstrap_tokens: U64Schema.optional().describe('Tokens a sub-agent started with.'),
  }),
)
export type TokenBreakdown = z.infer<typeof TokenBreakdownSchema>

export const TurnStartedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('turn.started').describe('Always `turn.started`.'),
    token_breakdown: TokenBreakdownSchema.optional().describe(
      "Where the prompt's tokens go, when known.",
    ),
  }),
)

export const TurnCompletedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('turn.completed').describe('Always `turn.completed`.'),
    usage: UsageSchema.describe('Token usage of the turn.'),
  }),
)

export const TurnFailedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('turn.failed').describe('Always `turn.failed`.'),
    message: z.string().describe('What went wrong.'),
    usage: UsageSchema.optional().describe('Token usage of the turn.'),
  }),
)

export const ItemStartedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('item.started').describe('Always `item.started`.'),
    item: ThreadItemSchema.describe('The item.'),
  }),
)

export const ItemUpdatedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('item.updated').describe('Always `item.updated`.'),
    item: ThreadItemSchema.describe('The item.'),
  }),
)

export const ItemCompletedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('item.completed').describe('Always `item.completed`.'),
    item: ThreadItemSchema.describe('The item.'),
  }),
)

export const PermissionRequestedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('permission.requested').describe('Always `permission.requested`.'),
    tool_name: z.string().describe('The tool of the call.'),
  }),
)

export const PermissionResolvedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('permission.resolved').describe('Always `permission.resolved`.'),
    tool_name: z.string().describe('The tool of the call.'),
    decision: PermissionDecisionSchema.describe('The decision.'),
    wait_ms: U64Schema.describe('How long the call waited for the answer (ms).'),
  }),
)

export const InterjectedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('interjected').describe('Always `interjected`.'),
    source: InterjectionSourceSchema.describe('Where the interjection came from.'),
    image_count: U32Schema.describe('Images attached to it.'),
    redirect_kind: RedirectKindSchema.describe('How it redirects the turn.'),
  }),
)

export const PlanDeltaEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('plan.delta').describe('Always `plan.delta`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    turn_id: z.string().describe('The turn (`turn-<n>`).'),
    item_id: z.string().describe('The plan item.'),
    delta: z.string().describe('Text appended to the plan.'),
  }),
)

export const PlanApprovalRequestedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('plan.approval.requested').describe('Always `plan.approval.requested`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    turn_id: z.string().describe('The turn (`turn-<n>`).'),
    plan_file: z.string().optional().describe('Where the plan was written.'),
  }),
)

export const PlanApprovalResolvedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('plan.approval.resolved').describe('Always `plan.approval.resolved`.'),
    thread_id: z.string().describe('The VT Code thread id of the session.'),
    turn_id: z.string().describe('The turn (`turn-<n>`).'),
    decision: PlanApprovalDecisionSchema.describe('The decision.'),
    automatic: z.boolean().describe('Whether the decision was made without a human (auto-accept).'),
  }),
)

export const ErrorEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('error').describe('Always `error`.'),
    message: z.string().describe('What went wrong.'),
  }),
)

/** Every known event schema by its `type`. */
export const THREAD_EVENT_SCHEMAS = {
  'thread.started': ThreadStartedEventSchema,
  'thread.completed': ThreadCompletedEventSchema,
  'thread.compact_boundary': ThreadCompactBoundaryEventSchema,
  'context.reset': ContextResetEventSchema,
  'turn.started': TurnStartedEventSchema,
  'turn.completed': TurnCompletedEventSchema,
  'turn.failed': TurnFailedEventSchema,
  'item.started': ItemStartedEventSchema,
  'item.updated': ItemUpdatedEventSchema,
  'item.completed': ItemCompletedEventSchema,
  'permission.requested': PermissionRequestedEventSchema,
  'permission.resolved': PermissionResolvedEventSchema,
  interjected: InterjectedEventSchema,
  'plan.delta': PlanDeltaEventSchema,
  'plan.approval.requested': PlanApprovalRequestedEventSchema,
  'plan.approval.resolved': PlanApprovalResolvedEventSchema,
  error: ErrorEventSchema,
} as const

/** Known events only (no catch-all): for validating events we produce. */
export const ThreadEventSchema = lazySchema(() =>
  z
    .discriminatedUnion('type', [
      ThreadStartedEventSchema,
      ThreadCompletedEventSchema,
      ThreadCompactBoundaryEventSchema,
      ContextResetEventSchema,
      TurnStartedEventSchema,
      TurnCompletedEventSchema,
      TurnFailedEventSchema,
      ItemStartedEventSchema,
      ItemUpdatedEventSchema,
      ItemCompletedEventSchema,
      PermissionRequestedEventSchema,
      PermissionResolvedEventSchema,
      InterjectedEventSchema,
      PlanDeltaEventSchema,
      PlanApprovalRequestedEventSchema,
      PlanApprovalResolvedEventSchema,
      ErrorEventSchema,
    ])
    .meta({ id: 'ThreadEvent', description: 'A VT Code ThreadEvent (event schema 0.11.0).' }),
)

export type ThreadStartedEvent = z.infer<typeof ThreadStartedEventSchema>
export type ThreadCompletedEvent = z.infer<typeof ThreadCompletedEventSchema>
export type ThreadCompactBoundaryEvent = z.infer<typeof ThreadCompactBoundaryEventSchema>
export type ContextResetEvent = z.infer<typeof ContextResetEventSchema>
export type TurnStartedEvent = z.infer<typeof TurnStartedEventSchema>
export type TurnCompletedEvent = z.infer<typeof TurnCompletedEventSchema>
export type TurnFailedEvent = z.infer<typeof TurnFailedEventSchema>
export type ItemStartedEvent = z.infer<typeof ItemStartedEventSchema>
export type ItemUpdatedEvent = z.infer<typeof ItemUpdatedEventSchema>
export type ItemCompletedEvent = z.infer<typeof ItemCompletedEventSchema>
export type PermissionRequestedEvent = z.infer<typeof PermissionRequestedEventSchema>
export type PermissionResolvedEvent = z.infer<typeof PermissionResolvedEventSchema>
export type InterjectedEvent = z.infer<typeof InterjectedEventSchema>
export type PlanDeltaEvent = z.infer<typeof PlanDeltaEventSchema>
export type PlanApprovalRequestedEvent = z.infer<typeof PlanApprovalRequestedEventSchema>
export type PlanApprovalResolvedEvent = z.infer<typeof PlanApprovalResolvedEventSchema>
export type ErrorEvent = z.infer<typeof ErrorEventSchema>

/** A known VT Code event. */
export type ThreadEvent = z.infer<typeof ThreadEventSchema>
export type ThreadEventType = ThreadEvent['type']

export const THREAD_EVENT_TYPES = Object.keys(THREAD_EVENT_SCHEMAS) as ThreadEventType[]

export function isThreadEventType(type: string): type is ThreadEventType {
  return Object.hasOwn(THREAD_EVENT_SCHEMAS, type)
}

/**
 * An event whose `type` this schema version does not know. It is carried opaquely and written
 * back exactly as read, so newer producers' events survive a pass through Turnline.
 */
export interface UnknownThreadEvent {
  readonly type: 'unknown'
  /** The wire `type` value. */
  readonly original_type: string
  /** The exact JSON text of the event object as read. */
  readonly source: string
}

/** What a reader can get back: a known event, or an opaque unknown one. */
export type ParsedThreadEvent = ThreadEvent | UnknownThreadEvent

export function isUnknownEvent(event: ParsedThreadEvent): event is UnknownThreadEvent {
  return event.type === 'unknown' && 'source' in event
}

/**
 * Canonical `events.jsonl` framing: `{"schema_version":"0.11.0","event":{…}}`. Any version string
 * is accepted on read (as VT Code does) and kept when re-serialized.
 */
export interface VersionedThreadEvent {
  schema_version: string
  event: ParsedThreadEvent
}
