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
import { ThreadItemSchema } from './thread-item.ts'
import { UsageSchema } from './usage.ts'

/**
 * VT Code `ThreadEvent` (event schema 0.11.0), internally tagged on `type`. Field order in every
 * schema is the serde declaration order (`type` first), which is the order the serializer writes.
 * Optional fields are omitted when absent and rejected when `null`. Event types this schema does
 * not know are read as {@link UnknownThreadEvent} (VT Code's `#[serde(other)]` catch-all).
 */

export const ThreadStartedEventSchema = z.object({
  type: z.literal('thread.started'),
  thread_id: z.string(),
})

export const ThreadCompletedEventSchema = z.object({
  type: z.literal('thread.completed'),
  thread_id: z.string(),
  session_id: z.string(),
  subtype: ThreadCompletionSubtypeSchema,
  outcome_code: z.string(),
  /** Only on success: the final summary / latest assistant text. */
  result: z.string().optional(),
  /** Provider stop reason of the last model turn, or error text on failures. */
  stop_reason: z.string().optional(),
  /** Aggregate over the thread. */
  usage: UsageSchema,
  /** Estimated cost; omitted when pricing is unknown. Written as a JSON float (`2.0`, `1.25`). */
  total_cost_usd: z.number().optional(),
  num_turns: U64Schema,
})

export const ThreadCompactBoundaryEventSchema = z.object({
  type: z.literal('thread.compact_boundary'),
  thread_id: z.string(),
  trigger: CompactionTriggerSchema,
  mode: CompactionModeSchema,
  original_message_count: U64Schema,
  compacted_message_count: U64Schema,
  history_artifact_path: z.string().optional(),
  previous_segment_id: z.string().optional(),
  new_segment_id: z.string().optional(),
  previous_prefix_hash: z.string().optional(),
  new_prefix_hash: z.string().optional(),
  previous_catalog_hash: z.string().optional(),
  new_catalog_hash: z.string().optional(),
})

export const ContextResetEventSchema = z.object({
  type: z.literal('context.reset'),
  thread_id: z.string(),
  turn_id: z.string(),
  trigger: ContextResetTriggerSchema,
  plan_preserved: z.boolean(),
  previous_context_usage_percent: U8Schema,
  tool_budget_reset: z.boolean(),
})

/** Token attribution of the assembled first-request prefix (all u64). */
export const TokenBreakdownSchema = z.object({
  system_prompt_tokens: U64Schema,
  tool_schema_tokens: U64Schema,
  instruction_file_tokens: U64Schema,
  message_history_tokens: U64Schema,
  cache_read_tokens: U64Schema,
  cache_write_tokens: U64Schema,
  cache_miss_tokens: U64Schema,
  subagent_bootstrap_tokens: U64Schema.optional(),
})
export type TokenBreakdown = z.infer<typeof TokenBreakdownSchema>

export const TurnStartedEventSchema = z.object({
  type: z.literal('turn.started'),
  token_breakdown: TokenBreakdownSchema.optional(),
})

export const TurnCompletedEventSchema = z.object({
  type: z.literal('turn.completed'),
  usage: UsageSchema,
})

export const TurnFailedEventSchema = z.object({
  type: z.literal('turn.failed'),
  message: z.string(),
  usage: UsageSchema.optional(),
})

export const ItemStartedEventSchema = z.object({
  type: z.literal('item.started'),
  item: ThreadItemSchema,
})

export const ItemUpdatedEventSchema = z.object({
  type: z.literal('item.updated'),
  item: ThreadItemSchema,
})

export const ItemCompletedEventSchema = z.object({
  type: z.literal('item.completed'),
  item: ThreadItemSchema,
})

export const PermissionRequestedEventSchema = z.object({
  type: z.literal('permission.requested'),
  tool_name: z.string(),
})

export const PermissionResolvedEventSchema = z.object({
  type: z.literal('permission.resolved'),
  tool_name: z.string(),
  decision: PermissionDecisionSchema,
  wait_ms: U64Schema,
})

export const InterjectedEventSchema = z.object({
  type: z.literal('interjected'),
  source: InterjectionSourceSchema,
  image_count: U32Schema,
  redirect_kind: RedirectKindSchema,
})

export const PlanDeltaEventSchema = z.object({
  type: z.literal('plan.delta'),
  thread_id: z.string(),
  turn_id: z.string(),
  item_id: z.string(),
  delta: z.string(),
})

export const PlanApprovalRequestedEventSchema = z.object({
  type: z.literal('plan.approval.requested'),
  thread_id: z.string(),
  turn_id: z.string(),
  plan_file: z.string().optional(),
})

export const PlanApprovalResolvedEventSchema = z.object({
  type: z.literal('plan.approval.resolved'),
  thread_id: z.string(),
  turn_id: z.string(),
  decision: PlanApprovalDecisionSchema,
  automatic: z.boolean(),
})

export const ErrorEventSchema = z.object({
  type: z.literal('error'),
  message: z.string(),
})

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
export const ThreadEventSchema = z
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
  .meta({ id: 'ThreadEvent', description: 'A VT Code ThreadEvent (event schema 0.11.0).' })

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
