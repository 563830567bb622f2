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

/**
 * The parts a message of each role may hold, where the transcript has room for them: a user's
 * texts, images and files (an `output_text` part counts as text); an assistant's texts and
 * refusals. Another part (an assistant's image, a user's refusal) would be dropped on the way
 * to the model, so it is refused; a system or developer message's parts are checked as its text
 * joins the instructions (open-responses-run.ts).
 */
const PARTS_OF_ROLE: Record<string, readonly string[]> = {
  user: ['input_text', 'input_image', 'input_file', 'output_text'],
  assistant: ['output_text', 'refusal', 'input_text'],
}

const MessageItem = lazySchema(() =>
  z
    .object({
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
          'A string, or parts: `input_text`, `input_image`, `input_file` (and `output_text`, read as text) for a user; `output_text`, `refusal` (and `input_text`) for an assistant; another part is refused.',
        ),
    })
    .superRefine((message, ctx) => {
      const allowed = PARTS_OF_ROLE[message.role]
      if (allowed === undefined || typeof message.content === 'string') return
      message.content.forEach((part, index) => {
        if (allowed.includes(part.type)) return
        ctx.addIssue({
          code: 'custom',
          message: `a ${message.role} message holds ${allowed.join(', ')} parts, not ${part.type}`,
          path: ['content', index],
        })
      })
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

/**
 * A function's output is a tool result, which holds text only: an image in it would not reach
 * the model, so it is refused rather than dropped (a user message after the outputs carries one).
 */
const OUTPUT_IMAGE_REFUSED =
  'a function_call_output holds text only here (input_text parts): send the image in a user message after the outputs'

const FunctionCallOutputItem = lazySchema(() =>
  z
    .object({
      type: z.literal('function_call_output').describe('Always `function_call_output`.'),
      id: Id,
      status: Status,
      call_id: z.string().min(1).max(200).describe('The call this is the output of.'),
      output: z
        .union([
          Text,
          z.array(z.discriminatedUnion('type', [InputText, InputImagePartSchema])).max(64),
        ])
        .describe(
          'What the function returned: text, or `input_text` parts (an `input_image` part is refused: send the image in a user message after the outputs).',
        ),
    })
    .superRefine((item, ctx) => {
      if (typeof item.output === 'string') return
      item.output.forEach((part, index) => {
        if (part.type === 'input_image') {
          ctx.addIssue({ code: 'custom', message: OUTPUT_IMAGE_REFUSED, path: ['output', index] })
        }
      })
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

/**
 * The images and files one request's `input` may carry together. Each `data:` one is stored in
 * the response's session before the turn runs (one storage write each), so without this a body
 * of small distinct images (some 14,000 in 1 MiB) held the request for seconds of writes.
 */
export const INPUT_MEDIA_MAX = 500

/** The `input_image` and `input_file` parts of the items' messages. */
export function inputMediaCount(items: readonly InputItem[]): number {
  let count = 0
  for (const item of items) {
    if (item.type !== 'message' || typeof item.content === 'string') continue
    for (const part of item.content) {
      if (part.type === 'input_image' || part.type === 'input_file') count += 1
    }
  }
  return count
}

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
