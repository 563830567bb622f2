import * as z from 'zod'
import { ClientToolSchema } from './client-tool.ts'
import { InputFilePartSchema } from './input-file.ts'
import { lazySchema } from './lazy-schema.ts'
import { INPUT_TEXT_MAX_CHARS, InputImagePartSchema } from './turn-input.ts'

/**
 * The items of a `POST /v1/responses` `input` array (Open Responses input items): messages of
 * every role, the model's earlier function calls and the client's outputs for them, reasoning
 * items; and the client's function tools. Items a client sends back as it read them from a
 * response carry output-only fields (`status`, `annotations`, `logprobs`, a helper's `parsed`):
 * those are dropped, not refused. Null means absent, as in the specification's request schema.
 */
const Text = lazySchema(() => z.string().max(1_000_000))
const Id = lazySchema(() =>
  z.string().max(200).nullish().describe('Ignored (an id the item had in a response).'),
)
const Status = lazySchema(() => z.string().max(40).nullish().describe('Ignored.'))

const InputText = lazySchema(() =>
  z.object({
    type: z.literal('input_text').describe('Always `input_text`.'),
    text: Text.describe('The text.'),
  }),
)
/** A message's text: may be long (the request body's limit comes first). */
const MessageText = lazySchema(() => z.string().max(INPUT_TEXT_MAX_CHARS))
const MessageInputText = lazySchema(() =>
  z.object({
    type: z.literal('input_text').describe('Always `input_text`.'),
    text: MessageText.describe(
      "The text. In the input's last user message, over the inline limit (64 KiB) it is kept whole as an artifact of the response's session and the model reads a preview naming it.",
    ),
  }),
)
const OutputText = lazySchema(() =>
  z.object({
    type: z.literal('output_text').describe('Always `output_text`.'),
    text: Text.describe('The text the model wrote.'),
  }),
)
const Refusal = lazySchema(() =>
  z.object({
    type: z.literal('refusal').describe('Always `refusal`.'),
    refusal: Text.describe('What the model refused with.'),
  }),
)

const MessageItem = lazySchema(() =>
  z.object({
    type: z.literal('message').describe('Always `message` (may be left out).'),
    id: Id,
    status: Status,
    role: z
      .enum(['user', 'assistant', 'system', 'developer'], {
        error: 'role must be user, assistant, system or developer',
      })
      .describe('Who wrote it.'),
    content: z
      .union([
        MessageText,
        z
          .array(
            z.discriminatedUnion('type', [
              MessageInputText,
              InputImagePartSchema,
              InputFilePartSchema,
              OutputText,
              Refusal,
            ]),
          )
          .max(64),
      ])
      .describe(
        'A string, or parts: `input_text`, `input_image` and `input_file` (user), `output_text` and `refusal` (assistant).',
      ),
  }),
)
export type MessageItem = z.infer<typeof MessageItem>

const FunctionCallItem = lazySchema(() =>
  z.object({
    type: z.literal('function_call').describe('Always `function_call`.'),
    id: Id,
    status: Status,
    call_id: z.string().min(1).max(200).describe('The call id the model gave the call.'),
    name: z.string().min(1).max(64).describe('The function called.'),
    arguments: z.string().max(1_000_000).describe('The arguments, JSON text.'),
  }),
)
export type FunctionCallItem = z.infer<typeof FunctionCallItem>

const FunctionCallOutputItem = lazySchema(() =>
  z.object({
    type: z.literal('function_call_output').describe('Always `function_call_output`.'),
    id: Id,
    status: Status,
    call_id: z.string().min(1).max(200).describe('The call this is the output of.'),
    output: z
      .union([
        Text,
        z.array(z.discriminatedUnion('type', [InputText, InputImagePartSchema])).max(64),
      ])
      .describe('What the function returned: text, or `input_text` parts (images are dropped).'),
  }),
)
export type FunctionCallOutputItem = z.infer<typeof FunctionCallOutputItem>

const ReasoningItem = lazySchema(() =>
  z.object({
    type: z.literal('reasoning').describe('Always `reasoning`.'),
    id: Id,
    status: Status,
    summary: z.array(z.unknown()).max(64).nullish().describe('Ignored: reasoning is not replayed.'),
    content: z.array(z.unknown()).max(64).nullish().describe('Ignored.'),
    encrypted_content: z.string().nullish().describe('Ignored.'),
  }),
)

/** A compacted conversation (`POST /v1/responses/compact`): it stands for everything before it. */
const CompactionItem = lazySchema(() =>
  z.object({
    type: z.literal('compaction').describe('Always `compaction`.'),
    id: Id,
    encrypted_content: z
      .string()
      .min(1)
      .max(50_000_000)
      .describe('As `POST /v1/responses/compact` answered it.'),
    created_by: z.string().max(200).nullish().describe('Ignored.'),
  }),
)

/** An input item; a message may leave out `type`. */
export const InputItemSchema = lazySchema(() =>
  z.preprocess(
    (value) =>
      value !== null && typeof value === 'object' && !('type' in value) && 'role' in value
        ? { ...value, type: 'message' }
        : value,
    z.discriminatedUnion(
      'type',
      [MessageItem, FunctionCallItem, FunctionCallOutputItem, ReasoningItem, CompactionItem],
      {
        error:
          'an input item is a message, function_call, function_call_output, reasoning or compaction item ' +
          '(item_reference is not supported: send the item itself, or previous_response_id)',
      },
    ),
  ),
)
export type InputItem = z.infer<typeof InputItemSchema>

/** A function tool of the request (`{type: "function", name, description, parameters, strict}`). */
export const FunctionToolSchema = lazySchema(() =>
  z
    .object({
      type: z
        .literal('function', {
          error:
            'only function tools are supported: Turnline runs its own tools (the sandbox, HTTP and ' +
            'MCP tools of the session) itself',
        })
        .describe('Always `function`.'),
      name: ClientToolSchema.shape.name,
      description: z
        .string()
        .max(4000)
        .nullish()
        .describe('What the function does, for the model.'),
      parameters: z
        .record(z.string(), z.unknown())
        .nullish()
        .describe('JSON Schema of the arguments object.'),
      strict: z
        .boolean()
        .nullish()
        .describe('Whether the arguments must follow the schema exactly.'),
    })
    .describe('A function the client runs itself.'),
)
export type FunctionTool = z.infer<typeof FunctionToolSchema>

export const ToolChoiceSchema = lazySchema(() =>
  z
    .union([
      z.enum(['auto', 'none', 'required']),
      z.strictObject({
        type: z.literal('function').describe('Always `function`.'),
        name: z.string().min(1).max(64).describe('The function the model must call.'),
      }),
    ])
    .describe('`auto`, `none`, `required`, or `{type: "function", name}`.'),
)
export type ToolChoice = z.infer<typeof ToolChoiceSchema>
