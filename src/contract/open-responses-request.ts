import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import { ECHOED_DEFAULTS } from './open-responses-defaults.ts'
import {
  encodeResponseRecord,
  RESERVED_METADATA_PREFIX,
  RESPONSE_RECORD_KEY,
} from './open-responses-record.ts'
import type { ModelSettingsInput, SessionConfigInput } from './session-config.ts'
import { ReasoningEffortSchema } from './session-config.ts'
import { InputImagePartSchema, type InputPart, type TurnInput } from './turn-input.ts'

/**
 * `POST /v1/responses` body: the Open Responses request fields Turnline honours. One call is
 * one exec session (create, one turn, complete), so there is no `previous_response_id`; unknown
 * fields are rejected so a client learns what was not applied. Null means absent, as in the
 * specification's request schema.
 */
const Text = z.string().max(1_000_000)

const InputText = z.strictObject({
  type: z.literal('input_text').describe('Always `input_text`.'),
  text: Text.describe('The text.'),
})

const InputMessage = z.strictObject({
  type: z.literal('message').optional().describe('Always `message`.'),
  id: z.string().max(200).nullish().describe('Ignored (accepted for compatibility).'),
  status: z.string().max(40).nullish().describe('Ignored (accepted for compatibility).'),
  role: z
    .enum(['user', 'system', 'developer'], {
      error:
        'role must be user, system or developer: earlier assistant output cannot be replayed ' +
        'into a new response (use a session and POST …/turns for multi-turn conversations)',
    })
    .describe('`user`, or `system`/`developer` for instructions.'),
  content: z
    .union([
      Text,
      z
        .array(z.discriminatedUnion('type', [InputText, InputImagePartSchema]))
        .min(1)
        .max(64),
    ])
    .describe(
      'The message: a string, or input_text and input_image parts (images in user messages only).',
    ),
})
export type InputMessage = z.infer<typeof InputMessage>

export const ResponsesRequestSchema = z.strictObject({
  model: z
    .string()
    .min(1)
    .max(200)
    .nullish()
    .describe('A model name; absent → the deployment default.'),
  input: z
    .union([Text.min(1), z.array(InputMessage).min(1).max(256)])
    .describe('A prompt string, or messages.'),
  instructions: z.string().max(200_000).nullish().describe('System instructions.'),
  stream: z
    .boolean()
    .optional()
    .describe('Stream the events (SSE) instead of answering the response object.'),
  temperature: z.number().min(0).max(2).nullish().describe('Sampling temperature.'),
  top_p: z.number().min(0).max(1).nullish().describe('Nucleus sampling.'),
  max_output_tokens: z
    .number()
    .int()
    .min(16)
    .max(1_000_000)
    .nullish()
    .describe('Cap on the tokens of the answer.'),
  reasoning: z
    .strictObject({
      effort: ReasoningEffortSchema.nullish().describe('Reasoning effort.'),
      summary: z
        .enum(['auto', 'concise', 'detailed'])
        .nullish()
        .describe('Reasoning summary detail.'),
    })
    .nullish()
    .describe(
      "Reasoning effort and summaries, as a session model's `reasoning_effort` / `_summary`.",
    ),
  max_tool_calls: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .nullish()
    .describe("The most tool calls the turn may make (the session's `harness.max_tool_loops`)."),
  metadata: z
    .record(z.string().min(1).max(64), z.string().max(512))
    .refine((value) => Object.keys(value).length <= 16, { error: 'at most 16 metadata keys' })
    .refine(
      (value) => !Object.keys(value).some((key) => key.startsWith(RESERVED_METADATA_PREFIX)),
      {
        error: `metadata keys starting with "${RESERVED_METADATA_PREFIX}" are reserved`,
      },
    )
    .nullish()
    .describe('String labels echoed in the response (keys starting `turnline:` are reserved).'),
  tools: z
    .array(z.unknown())
    .max(
      0,
      'tools are not supported on /v1/responses: Turnline runs the tools itself; define HTTP ' +
        'tools on a session (POST /v1/sessions) or use POST /v1/exec',
    )
    .nullish()
    .describe('Not supported: must be absent or empty.'),
  tool_choice: z
    .literal('auto', {
      error: 'tool_choice can only be "auto": Turnline chooses and runs its tools',
    })
    .nullish()
    .describe('Only `auto`.'),
  store: z
    .literal(true, { error: 'store cannot be false: every response is kept as a session' })
    .nullish()
    .describe('Only `true`: every response is stored with its session.'),
  background: z
    .literal(false, { error: 'background is not supported: stream the response instead' })
    .nullish()
    .describe('Only `false`: stream instead.'),
  ...ECHOED_DEFAULTS,
})
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>

/** `GET /v1/responses/:id` query: the stream instead of the object, and where to resume it. */
export const ResponseReadQuerySchema = z.strictObject({
  stream: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .describe('Stream the events (SSE) instead of answering the response object.'),
  starting_after: z.coerce
    .number()
    .int()
    .min(-1)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe('Resume: only events with a greater `sequence_number`.'),
})
export type ResponseReadQuery = z.infer<typeof ResponseReadQuerySchema>

/** The model label a response reports when the request names none (the deployment default). */
export const DEFAULT_MODEL_LABEL = 'default'

const textOf = (message: InputMessage): string =>
  typeof message.content === 'string'
    ? message.content
    : message.content.map((part) => (part.type === 'input_text' ? part.text : '')).join('')

const imagesOf = (message: InputMessage): InputPart[] =>
  typeof message.content === 'string'
    ? []
    : message.content.filter((part) => part.type === 'input_image')

/**
 * The prompt of the user messages: their texts joined by blank lines, as a string — or, when
 * they carry images, as parts (each message's text, then its images).
 */
function promptOf(users: InputMessage[]): TurnInput {
  const texts = users.map(textOf)
  if (users.every((message) => imagesOf(message).length === 0)) {
    return texts.filter((text) => text !== '').join('\n\n')
  }
  return users.flatMap((message, i) => [
    ...(texts[i] ? [{ type: 'input_text' as const, text: texts[i] }] : []),
    ...imagesOf(message),
  ])
}

/**
 * The exec body of a request: user messages become the prompt (joined by blank lines), system
 * and developer messages are appended to the instructions; sampling settings go to the model,
 * `max_tool_calls` to the harness, metadata (with the response record) to the session.
 */
export function toExecBody(
  request: ResponsesRequest,
  createdAt: number,
): SessionConfigInput & { prompt: TurnInput } {
  const messages: InputMessage[] =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input
  const prompt = promptOf(messages.filter((message) => message.role === 'user'))
  if (prompt.length === 0) {
    throw new TurnlineError('invalid_input', 'input needs at least one user message with text', {
      details: { field: 'body.input' },
    })
  }
  if (messages.some((message) => message.role !== 'user' && imagesOf(message).length > 0)) {
    throw new TurnlineError('invalid_input', 'input_image parts belong in user messages', {
      details: { field: 'body.input' },
    })
  }
  const instructions = [
    request.instructions ?? '',
    ...messages.filter((message) => message.role !== 'user').map(textOf),
  ]
    .filter((text) => text !== '')
    .join('\n\n')
  const sampling: Omit<ModelSettingsInput, 'name'> = {
    ...(request.temperature == null ? {} : { temperature: request.temperature }),
    ...(request.top_p == null ? {} : { top_p: request.top_p }),
    ...(request.max_output_tokens == null ? {} : { max_output_tokens: request.max_output_tokens }),
    ...(request.reasoning?.effort == null ? {} : { reasoning_effort: request.reasoning.effort }),
    ...(request.reasoning?.summary == null ? {} : { reasoning_summary: request.reasoning.summary }),
  }
  // Sampling without a model name applies to the deployment's model.
  const sampled = Object.keys(sampling).length > 0
  const record = encodeResponseRecord({
    v: 1,
    created_at: createdAt,
    model: request.model ?? DEFAULT_MODEL_LABEL,
    max_tool_calls: request.max_tool_calls ?? null,
  })
  return {
    ...(sampled
      ? { model: { ...(request.model == null ? {} : { name: request.model }), ...sampling } }
      : request.model == null
        ? {}
        : { model: request.model }),
    ...(instructions === '' ? {} : { instructions }),
    ...(request.max_tool_calls == null
      ? {}
      : { harness: { max_tool_loops: request.max_tool_calls } }),
    metadata: { ...request.metadata, [RESPONSE_RECORD_KEY]: record },
    prompt,
  }
}
