import * as z from 'zod'
import {
  CompactionModeSchema,
  CompactionTriggerSchema,
  ContextResetTriggerSchema,
  ThreadCompletionSubtypeSchema,
} from './enums.ts'
import { U8Schema, U64Schema } from './integers.ts'
import { lazySchema } from './lazy-schema.ts'
import { UsageSchema } from './usage.ts'

/**
 * The events of the thread itself, outside any one turn's work (VT Code event schema 0.11.0,
 * the union in `thread-event.ts`): it started, it completed, its transcript was compacted or its
 * context reset, and an error. Field order is the serde declaration order (`type` first).
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

export const ErrorEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('error').describe('Always `error`.'),
    message: z.string().describe('What went wrong.'),
  }),
)

export type ThreadStartedEvent = z.infer<typeof ThreadStartedEventSchema>
export type ThreadCompletedEvent = z.infer<typeof ThreadCompletedEventSchema>
export type ThreadCompactBoundaryEvent = z.infer<typeof ThreadCompactBoundaryEventSchema>
export type ContextResetEvent = z.infer<typeof ContextResetEventSchema>
export type ErrorEvent = z.infer<typeof ErrorEventSchema>
