import * as z from 'zod'
import { InterjectionSourceSchema, RedirectKindSchema } from './enums.ts'
import { U32Schema, U64Schema } from './integers.ts'
import { lazySchema } from './lazy-schema.ts'
import { ThreadItemSchema } from './thread-item.ts'
import { UsageSchema } from './usage.ts'

/**
 * The events of a turn's work (VT Code event schema 0.11.0, the union in `thread-event.ts`): the
 * turn starting (with where its prompt's tokens go), completing or failing, its items starting,
 * updating and completing, and an interjection into it. Field order is the serde declaration
 * order (`type` first).
 */

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

export const InterjectedEventSchema = lazySchema(() =>
  z.object({
    type: z.literal('interjected').describe('Always `interjected`.'),
    source: InterjectionSourceSchema.describe('Where the interjection came from.'),
    image_count: U32Schema.describe('Images attached to it.'),
    redirect_kind: RedirectKindSchema.describe('How it redirects the turn.'),
  }),
)

export type TurnStartedEvent = z.infer<typeof TurnStartedEventSchema>
export type TurnCompletedEvent = z.infer<typeof TurnCompletedEventSchema>
export type TurnFailedEvent = z.infer<typeof TurnFailedEventSchema>
export type ItemStartedEvent = z.infer<typeof ItemStartedEventSchema>
export type ItemUpdatedEvent = z.infer<typeof ItemUpdatedEventSchema>
export type ItemCompletedEvent = z.infer<typeof ItemCompletedEventSchema>
export type InterjectedEvent = z.infer<typeof InterjectedEventSchema>
