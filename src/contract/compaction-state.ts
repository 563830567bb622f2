import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { RequestSegmentSchema } from './request-segment.ts'

/**
 * What compaction needs to remember between invocations, for the engine state: the request
 * segment in force, the pending flag of a soft crossing, the provider's last prompt count (so the
 * next invocation estimates without tokenizing the transcript), suppression after a failed
 * compaction, and the newest memory envelope's path.
 */
const Count = lazySchema(() => z.number().int().nonnegative())

export const UsageAnchorSchema = lazySchema(() =>
  z.object({
    input_tokens: Count,
    /** Transcript messages that request carried (the system prompt is not one of them). */
    message_count: Count,
  }),
)

/** VT Code's suppression scopes: a size/schema failure is sticky, credit/auth until a success. */
export const CompactionSuppressionSchema = lazySchema(() =>
  z.enum(['turn', 'sticky', 'until_success']),
)
export type CompactionSuppression = z.infer<typeof CompactionSuppressionSchema>

export const CompactionStateSchema = lazySchema(() =>
  z.object({
    segment: RequestSegmentSchema.optional(),
    pending: z.boolean().default(false),
    usage_anchor: UsageAnchorSchema.optional(),
    suppressed: CompactionSuppressionSchema.optional(),
    /** Turn counter value of a `turn` suppression (it ends with that turn). */
    suppressed_turn: Count.optional(),
    /** Compactions so far (numbers the history artifacts). */
    compactions: Count.default(0),
    memory_envelope_path: z.string().optional(),
  }),
)
export type CompactionState = z.infer<typeof CompactionStateSchema>
