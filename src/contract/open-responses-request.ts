import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import {
  encodeResponseRecord,
  RESERVED_METADATA_PREFIX,
  RESPONSE_RECORD_KEY,
} from './open-responses-record.ts'
import type { ModelSettingsInput, SessionConfigInput } from './session-config.ts'
import { ReasoningEffortSchema } from './session-config.ts'

/**
 * `POST /v1/responses` body: the Open Responses request fields Turnline honours. One call is
 * one exec session (create, one turn, complete), so there is no `previous_response_id`; unknown
 * fields are rejected so a client learns what was not applied. Null means absent, as in the
 * specification's request schema.
 */
const Text = z.string().max(1_000_000)

const InputText = z.strictObject({ type: z.literal('input_text'), text: Text })

const InputMessage = z.strictObject({
  type: z.literal('message').optional(),
  id: z.string().max(200).nullish(),
  status: z.string().max(40).nullish(),
  role: z.enum(['user', 'system', 'developer'], {
    error:
      'role must be user, system or developer: earlier assistant output cannot be replayed ' +
      'into a new response (use a session and POST …/turns for multi-turn conversations)',
  }),
  content: z.union([Text, z.array(InputText).min(1).max(64)]),
})
export type InputMessage = z.infer<typeof InputMessage>

export const ResponsesRequestSchema = z.strictObject({
  /** A model name; absent → the deployment default. */
  model: z.string().min(1).max(200).nullish(),
  input: z.union([Text.min(1), z.array(InputMessage).min(1).max(256)]),
  instructions: z.string().max(200_000).nullish(),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_output_tokens: z.number().int().min(16).max(1_000_000).nullish(),
  /** Reasoning effort and summaries, as a session model's `reasoning_effort` / `_summary`. */
  reasoning: z
    .strictObject({
      effort: ReasoningEffortSchema.nullish(),
      summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
    })
    .nullish(),
  /** The most tool calls the turn may make (the session's `harness.max_tool_loops`). */
  max_tool_calls: z.number().int().min(1).max(1000).nullish(),
  metadata: z
    .record(z.string().min(1).max(64), z.string().max(512))
    .refine((value) => Object.keys(value).length <= 16, { error: 'at most 16 metadata keys' })
    .refine(
      (value) => !Object.keys(value).some((key) => key.startsWith(RESERVED_METADATA_PREFIX)),
      {
        error: `metadata keys starting with "${RESERVED_METADATA_PREFIX}" are reserved`,
      },
    )
    .nullish(),
  tools: z
    .array(z.unknown())
    .max(
      0,
      'tools are not supported on /v1/responses: Turnline runs the tools itself; define HTTP ' +
        'tools on a session (POST /v1/sessions) or use POST /v1/exec',
    )
    .nullish(),
  tool_choice: z
    .literal('auto', {
      error: 'tool_choice can only be "auto": Turnline chooses and runs its tools',
    })
    .nullish(),
  store: z
    .literal(true, { error: 'store cannot be false: every response is kept as a session' })
    .nullish(),
  background: z
    .literal(false, { error: 'background is not supported: stream the response instead' })
    .nullish(),
})
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>

/** `GET /v1/responses/:id` query: the stream instead of the object, and where to resume it. */
export const ResponseReadQuerySchema = z.strictObject({
  stream: z.enum(['true', 'false', '1', '0']).optional(),
  /** Resume: only events with a greater `sequence_number`. */
  starting_after: z.coerce.number().int().min(-1).max(Number.MAX_SAFE_INTEGER).optional(),
})
export type ResponseReadQuery = z.infer<typeof ResponseReadQuerySchema>

/** The model label a response reports when the request names none (the deployment default). */
export const DEFAULT_MODEL_LABEL = 'default'

const textOf = (message: InputMessage): string =>
  typeof message.content === 'string'
    ? message.content
    : message.content.map((part) => part.text).join('')

/**
 * The exec body of a request: user messages become the prompt (joined by blank lines), system
 * and developer messages are appended to the instructions; sampling settings go to the model,
 * `max_tool_calls` to the harness, metadata (with the response record) to the session.
 */
export function toExecBody(
  request: ResponsesRequest,
  createdAt: number,
): SessionConfigInput & { prompt: string } {
  const messages: InputMessage[] =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input
  const prompt = messages
    .filter((message) => message.role === 'user')
    .map(textOf)
    .filter((text) => text !== '')
    .join('\n\n')
  if (prompt === '') {
    throw new TurnlineError('invalid_input', 'input needs at least one user message with text', {
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
