import * as z from 'zod'

/**
 * One message of the model-facing transcript, provider-neutral (OpenAI chat shape).
 * Stored in batch history deltas and state checkpoints; translated by model adapters.
 */
export const ToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  /** Raw JSON text as the model produced it. */
  arguments: z.string(),
})
export type ToolCall = z.infer<typeof ToolCallSchema>

export const HistoryMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({
    role: z.literal('user'),
    content: z.string(),
    /** Set when the message came from a steering follow-up intent. */
    intent_id: z.string().optional(),
  }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    tool_calls: z.array(ToolCallSchema).optional(),
  }),
  z.object({
    role: z.literal('tool'),
    tool_call_id: z.string().min(1),
    content: z.string(),
  }),
  /**
   * A provider's opaque compaction item (OpenAI `responses.compact`): the earlier conversation
   * in encrypted form, sent back as an input item on the same provider's Responses API only.
   * Everywhere else it counts as a system message without text (`content` stays empty).
   */
  z.object({
    role: z.literal('compaction'),
    content: z.literal('').default(''),
    provider: z.literal('openai'),
    encrypted_content: z.string().min(1),
    id: z.string().min(1).optional(),
  }),
])
export type HistoryMessage = z.infer<typeof HistoryMessageSchema>
