import type { JsonValue } from '../../contract/json-value.ts'
import type { ParsedThreadEvent } from '../../contract/thread-event.ts'

/**
 * The `vtcode:*` extension event a ThreadEvent becomes, or undefined when it has none. VT Code
 * names these `vtcode.<name>` inside a `response.custom_event`; the Open Responses
 * specification requires an extension event's own `type` to carry the implementor prefix, so
 * the same name and data go out as `{"type":"vtcode:<name>",…}`. Data is built with explicit
 * nulls for absent optional fields (reference §9); a compact boundary carries no segment fields.
 * Long: one switch over the event types, a case each.
 */
export function customEventFor(
  event: ParsedThreadEvent,
): { eventType: `vtcode:${string}`; data: { [key: string]: JsonValue } } | undefined {
  switch (event.type) {
    case 'thread.completed':
      return {
        eventType: 'vtcode:thread_completed',
        data: {
          thread_id: event.thread_id,
          session_id: event.session_id,
          subtype: event.subtype,
          outcome_code: event.outcome_code,
          result: event.result ?? null,
          stop_reason: event.stop_reason ?? null,
          usage: { ...event.usage },
          total_cost_usd: event.total_cost_usd ?? null,
          num_turns: event.num_turns,
        },
      }
    case 'thread.compact_boundary':
      return {
        eventType: 'vtcode:thread_compact_boundary',
        data: {
          thread_id: event.thread_id,
          trigger: event.trigger,
          mode: event.mode,
          original_message_count: event.original_message_count,
          compacted_message_count: event.compacted_message_count,
          history_artifact_path: event.history_artifact_path ?? null,
        },
      }
    case 'context.reset':
      return {
        eventType: 'vtcode:context_reset',
        data: {
          thread_id: event.thread_id,
          turn_id: event.turn_id,
          trigger: event.trigger,
          plan_preserved: event.plan_preserved,
          previous_context_usage_percent: event.previous_context_usage_percent,
          tool_budget_reset: event.tool_budget_reset,
        },
      }
    case 'plan.approval.requested':
      return {
        eventType: 'vtcode:plan_approval_requested',
        data: {
          thread_id: event.thread_id,
          turn_id: event.turn_id,
          plan_file: event.plan_file ?? null,
        },
      }
    case 'plan.approval.resolved':
      return {
        eventType: 'vtcode:plan_approval_resolved',
        data: {
          thread_id: event.thread_id,
          turn_id: event.turn_id,
          decision: event.decision,
          automatic: event.automatic,
        },
      }
    default:
      return undefined
  }
}
