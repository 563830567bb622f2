import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import {
  PermissionRequestedEventSchema,
  PermissionResolvedEventSchema,
  PlanApprovalRequestedEventSchema,
  PlanApprovalResolvedEventSchema,
  PlanDeltaEventSchema,
} from './permission-and-plan-events.ts'
import {
  ContextResetEventSchema,
  ErrorEventSchema,
  ThreadCompactBoundaryEventSchema,
  ThreadCompletedEventSchema,
  ThreadStartedEventSchema,
} from './thread-lifecycle-events.ts'
import {
  InterjectedEventSchema,
  ItemCompletedEventSchema,
  ItemStartedEventSchema,
  ItemUpdatedEventSchema,
  TurnCompletedEventSchema,
  TurnFailedEventSchema,
  TurnStartedEventSchema,
} from './turn-events.ts'

/**
 * VT Code `ThreadEvent` (event schema 0.11.0), internally tagged on `type`: the union of the
 * events of the thread (`thread-lifecycle-events.ts`), of a turn's work (`turn-events.ts`) and of
 * what a turn asks a person (`permission-and-plan-events.ts`). Field order in every schema is the
 * serde declaration order (`type` first), which is the order the serializer writes. Optional
 * fields are omitted when absent and rejected when `null`. Event types this schema does not know
 * are read as {@link UnknownThreadEvent} (VT Code's `#[serde(other)]` catch-all).
 */

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
