import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { ReasoningEffortSchema } from './model-config.ts'
import { echoedDefaults } from './open-responses-defaults.ts'
import {
  FunctionToolSchema,
  INPUT_MEDIA_MAX,
  InputItemSchema,
  inputMediaCount,
} from './open-responses-input.ts'
import { RESERVED_METADATA_PREFIX } from './open-responses-record.ts'
import { ToolChoiceSchema } from './tool-choice.ts'
import { INPUT_TEXT_MAX_CHARS } from './turn-input.ts'

/**
 * `POST /v1/responses` body: the Open Responses request fields Turnline honours; unknown fields
 * are rejected so a client learns what was not applied. Null means absent, as in the
 * specification's request schema. How a request becomes a session and a turn is
 * open-responses-run.ts.
 */

export const ResponsesRequestSchema = lazySchema(() =>
  z.strictObject({
    model: z
      .string()
      .min(1)
      .max(200)
      .nullish()
      .describe('A model name; absent → the deployment default.'),
    input: z
      .union([
        z.string().min(1).max(INPUT_TEXT_MAX_CHARS),
        z
          .array(InputItemSchema)
          .min(1)
          .max(1024)
          .refine((items) => inputMediaCount(items) <= INPUT_MEDIA_MAX, {
            error: `at most ${INPUT_MEDIA_MAX} input_image and input_file parts in all`,
          }),
      ])
      .describe(
        'A prompt string, or input items: messages (user, assistant, system, developer), function calls and their outputs, reasoning items.',
      ),
    previous_response_id: z
      .string()
      .regex(/^resp_[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'not a response id of this server')
      .nullish()
      .describe(
        'Continue that response: its conversation (input and output) comes before this input.',
      ),
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
      .describe(
        "The most calls of the server's own tools run in the response (the session's `harness.max_tool_calls`); once reached, the model is offered none and a further call is not run, and the response completes. Function tools are not counted.",
      ),
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
      .array(FunctionToolSchema)
      .max(128)
      .nullish()
      .describe(
        'Function tools the client runs: a call ends the response with `function_call` items; send their `function_call_output` items back to continue.',
      ),
    tool_choice: ToolChoiceSchema.nullish().describe(
      '`auto` (default), `none`, `required`, `{type: "function", name}` (one of `tools`), or `{type: "allowed_tools", mode, tools}`. A forced choice holds until the model has called a tool.',
    ),
    parallel_tool_calls: z
      .boolean()
      .nullish()
      .describe('false: the model calls at most one function per answer.'),
    store: z
      .boolean()
      .nullish()
      .describe(
        '`true` (default): the response is kept as a session (read back, continued, deleted). `false`: its session is erased once the response ends, so nothing of it can be read back or continued.',
      ),
    background: z
      .boolean()
      .nullish()
      .describe(
        '`true`: answer at once with the response `queued` and run it in the background (where the server runs a worker: `npm start`, Docker); poll `GET /v1/responses/{id}`, or `POST …/cancel`. Not with `stream`.',
      ),
    ...echoedDefaults(),
  }),
)
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>

/** `GET /v1/responses/:id` query: the stream instead of the object, and where to resume it. */
export const ResponseReadQuerySchema = lazySchema(() =>
  z.strictObject({
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
  }),
)
export type ResponseReadQuery = z.infer<typeof ResponseReadQuerySchema>

/** The model label a response reports when the request names none (the deployment default). */
export const DEFAULT_MODEL_LABEL = 'default'
