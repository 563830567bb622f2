import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import type { ModelSettingsInput } from './session-config.ts'
import { ModelSettingsSchema } from './session-config.ts'

/**
 * `POST /v1/responses` body: the Open Responses request fields Turnline can honour. One call is
 * one exec session (create, one turn, complete), so there is no `previous_response_id`; unknown
 * fields are rejected so a client learns what was not applied.
 */
const Text = z.string().max(1_000_000)

const InputText = z.strictObject({ type: z.literal('input_text'), text: Text })

const InputMessage = z.strictObject({
  type: z.literal('message').optional(),
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
  model: z.string().min(1).max(200).optional(),
  input: z.union([Text.min(1), z.array(InputMessage).min(1).max(256)]),
  instructions: z.string().max(200_000).optional(),
  stream: z.boolean().optional(),
  /** Sampling settings, as on a session's `model` (OpenAI's ranges). */
  temperature: ModelSettingsSchema.shape.temperature,
  top_p: ModelSettingsSchema.shape.top_p,
  max_output_tokens: ModelSettingsSchema.shape.max_output_tokens,
  reasoning: z
    .strictObject({
      effort: ModelSettingsSchema.shape.reasoning_effort,
      summary: ModelSettingsSchema.shape.reasoning_summary,
    })
    .optional(),
  tools: z
    .array(z.unknown())
    .max(
      0,
      'tools are not supported on /v1/responses: Turnline runs the tools itself; define HTTP ' +
        'tools on a session (POST /v1/sessions) or use POST /v1/exec',
    )
    .optional(),
})
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>

const textOf = (message: InputMessage): string =>
  typeof message.content === 'string'
    ? message.content
    : message.content.map((part) => part.text).join('')

/**
 * The exec body of a request: user messages become the prompt (joined by blank lines), system
 * and developer messages are appended to the instructions.
 */
export function toExecBody(request: ResponsesRequest): {
  model?: string | ModelSettingsInput
  instructions?: string
  prompt: string
} {
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
  const model = modelOf(request)
  return {
    ...(model === undefined ? {} : { model }),
    ...(instructions === '' ? {} : { instructions }),
    prompt,
  }
}

/** The model name, or settings when the request also sets sampling or reasoning. */
function modelOf(request: ResponsesRequest): string | ModelSettingsInput | undefined {
  const settings: ModelSettingsInput = {
    ...(request.model === undefined ? {} : { name: request.model }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.top_p === undefined ? {} : { top_p: request.top_p }),
    ...(request.max_output_tokens === undefined
      ? {}
      : { max_output_tokens: request.max_output_tokens }),
    ...(request.reasoning?.effort === undefined
      ? {}
      : { reasoning_effort: request.reasoning.effort }),
    ...(request.reasoning?.summary === undefined
      ? {}
      : { reasoning_summary: request.reasoning.summary }),
  }
  const keys = Object.keys(settings)
  if (keys.length === 0) return undefined
  return keys.length === 1 && settings.name !== undefined ? settings.name : settings
}
