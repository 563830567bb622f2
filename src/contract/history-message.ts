import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { StoredUserFileSchema, UserFileSchema } from './stored-file.ts'
import { StoredUserImageSchema } from './stored-image.ts'
import { UserImageSchema } from './turn-input.ts'

/**
 * One message of the model-facing transcript, provider-neutral (OpenAI chat shape).
 * Stored in batch history deltas and state checkpoints; translated by model adapters.
 *
 * Three versions are stored. Version 1 (batch and checkpoint version 1) is {@link
 * HistoryMessageV1Schema}, frozen. Version 2 adds, on assistant messages, the reasoning the model
 * produced before the answer (`reasoning`) and the answer's separate message items (`parts`):
 * each adapter sends them back the way its provider requires ({@link HistoryMessageV2Schema},
 * frozen). Version 3 (what is written) adds the provider's order of an answer's blocks when
 * reasoning came between its texts or tool calls (`order`), and user images stored in the
 * session's folder and named by reference instead of inline `data:` URLs (`images`).
 */
export const ToolCallSchema = lazySchema(() =>
  z.object({
    id: z.string().min(1),
    name: z.string().min(1),
    /** Raw JSON text as the model produced it. */
    arguments: z.string(),
  }),
)
export type ToolCall = z.infer<typeof ToolCallSchema>

/**
 * One block of an assistant message's reasoning, in the order the provider produced it. Readable
 * text may be sent to any provider that takes reasoning back; the opaque fields (a signature, an
 * encrypted payload, an item id) only to the API that produced them — an adapter leaves out the
 * blocks it cannot read.
 */
export const ReasoningBlockSchema = lazySchema(() =>
  z.discriminatedUnion('type', [
    /**
     * Reasoning text of an OpenAI-compatible Chat Completions server: the `reasoning_content`
     * (DeepSeek, Moonshot/Kimi, Qwen, vLLM, LM Studio) or `reasoning` (Ollama, OpenRouter, Groq)
     * field of its deltas, or the `thinking` content parts of Mistral. `field` is where it came
     * from, so it goes back in the same place.
     */
    z.object({
      type: z.literal('text'),
      text: z.string(),
      field: z.enum(['reasoning_content', 'reasoning', 'thinking']).optional(),
    }),
    /**
     * An OpenAI Responses `reasoning` output item: its id, summary parts and reasoning-text parts,
     * and the `encrypted_content` it carries when the request asked for it (`store: false`).
     */
    z.object({
      type: z.literal('openai_reasoning'),
      id: z.string().min(1),
      summary: z.array(z.string()),
      content: z.array(z.string()).optional(),
      encrypted_content: z.string().min(1).optional(),
    }),
    /** An Anthropic Messages `thinking` content block with the signature that must go back with it. */
    z.object({
      type: z.literal('anthropic_thinking'),
      thinking: z.string(),
      signature: z.string(),
    }),
    /** An Anthropic Messages `redacted_thinking` content block (encrypted, sent back unchanged). */
    z.object({
      type: z.literal('anthropic_redacted_thinking'),
      data: z.string().min(1),
    }),
  ]),
)
export type ReasoningBlock = z.infer<typeof ReasoningBlockSchema>

/**
 * One message item of an answer that came as several (OpenAI Responses: a `commentary` preamble
 * and a `final_answer`), with the `phase` the provider labelled it with.
 */
export const AnswerPartSchema = lazySchema(() =>
  z.object({
    text: z.string(),
    phase: z.enum(['commentary', 'final_answer']).optional(),
  }),
)
export type AnswerPart = z.infer<typeof AnswerPartSchema>

const SystemMessage = lazySchema(() => z.object({ role: z.literal('system'), content: z.string() }))
const UserMessage = lazySchema(() =>
  z.object({
    role: z.literal('user'),
    /** Its text (the text parts of an input with images, joined by blank lines). */
    content: z.string(),
    /** The images the input carried, in order (absent: none). */
    images: z.array(UserImageSchema).min(1).optional(),
    /** Set when the message came from a steering follow-up intent. */
    intent_id: z.string().optional(),
  }),
)
const AssistantMessageV1 = lazySchema(() =>
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    tool_calls: z.array(ToolCallSchema).optional(),
  }),
)
const ToolMessage = lazySchema(() =>
  z.object({
    role: z.literal('tool'),
    tool_call_id: z.string().min(1),
    content: z.string(),
  }),
)
/**
 * A provider's opaque compaction item (OpenAI `responses.compact`): the earlier conversation
 * in encrypted form, sent back as an input item on the same provider's Responses API only.
 * Everywhere else it counts as a system message without text (`content` stays empty).
 */
const CompactionMessage = lazySchema(() =>
  z.object({
    role: z.literal('compaction'),
    content: z.literal('').default(''),
    provider: z.literal('openai'),
    encrypted_content: z.string().min(1),
    id: z.string().min(1).optional(),
  }),
)

/** The transcript message of batch and checkpoint version 1 (read-only: never written again). */
export const HistoryMessageV1Schema = lazySchema(() =>
  z.discriminatedUnion('role', [
    SystemMessage,
    UserMessage,
    AssistantMessageV1,
    ToolMessage,
    CompactionMessage,
  ]),
)

const AssistantMessageV2 = lazySchema(() =>
  AssistantMessageV1.extend({
    /** What the model reasoned before this answer, block by block (absent: nothing kept). */
    reasoning: z.array(ReasoningBlockSchema).min(1).optional(),
    /**
     * The answer's message items when it came as several or they carried a phase; `content` is
     * their texts joined by a blank line. Absent: one message item, `content` alone.
     */
    parts: z.array(AnswerPartSchema).min(1).optional(),
  }),
)

/** The transcript message of batch and checkpoint version 2 (read-only: never written again). */
export const HistoryMessageV2Schema = lazySchema(() =>
  z.discriminatedUnion('role', [
    SystemMessage,
    UserMessage,
    AssistantMessageV2,
    ToolMessage,
    CompactionMessage,
  ]),
)

/** One kind of block of an answer, in {@link AssistantMessage.order}. */
export const AnswerBlockKindSchema = lazySchema(() => z.enum(['reasoning', 'text', 'tool_call']))
export type AnswerBlockKind = z.infer<typeof AnswerBlockKindSchema>

/** The transcript message of batch and checkpoint version 3 (what is written). */
export const HistoryMessageSchema = lazySchema(() =>
  z.discriminatedUnion('role', [
    SystemMessage,
    UserMessage.extend({
      /**
       * The images the input carried, in order: stored ones by reference (a `data:` image is
       * stored in the session's folder when its batch is committed), `https:` ones by URL.
       */
      images: z
        .array(z.union([UserImageSchema, StoredUserImageSchema]))
        .min(1)
        .optional(),
      /**
       * The documents (PDFs) the input carried, in order, for the model to read: stored in the
       * session's folder and named by reference once the batch is committed (stored-file.ts).
       * Added without a version bump: a build that does not know it reads the message without
       * its documents.
       */
      files: z
        .array(z.union([UserFileSchema, StoredUserFileSchema]))
        .min(1)
        .optional(),
    }),
    AssistantMessageV2.extend({
      /**
       * The order the provider gave the answer's blocks in, when it was not reasoning, then text,
       * then tool calls (Anthropic interleaved thinking between tool uses, OpenAI Responses
       * reasoning items between message and function call items): each entry stands for the next
       * reasoning block, text (a part, or `content` when there are no parts) or tool call.
       * Absent: that usual order. See `answerBlocks` (answer-blocks.ts).
       */
      order: z.array(AnswerBlockKindSchema).min(2).optional(),
    }),
    ToolMessage,
    CompactionMessage,
  ]),
)
export type HistoryMessage = z.infer<typeof HistoryMessageSchema>
export type AssistantMessage = Extract<HistoryMessage, { role: 'assistant' }>

/** Reads the messages of a stored document by its version (1, 2 or 3). */
export function historyMessagesSchema(version: 1 | 2 | 3) {
  return z.array(
    version === 1
      ? HistoryMessageV1Schema
      : version === 2
        ? HistoryMessageV2Schema
        : HistoryMessageSchema,
  )
}

/** Blank line between the texts of an answer's parts (`AssistantMessage.parts`). */
export const ANSWER_PART_SEPARATOR = '\n\n'
