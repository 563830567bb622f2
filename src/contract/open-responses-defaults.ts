import * as z from 'zod'
import { TextFormatJsonSchema } from './open-responses-record.ts'

/**
 * Request fields of `POST /v1/responses` whose only accepted value is the one the response
 * resource echoes: a client that sends back what it read (the AI SDK, the `openai` client's
 * helpers, the compliance suite) is not refused, and a value Turnline cannot honour is a 400
 * that says why. Null means absent, as everywhere in the request.
 */
const only = <T extends string | number | boolean>(value: T, why: string) =>
  z.literal(value, { error: why }).nullish()

/** The fields, built when the request schema that spreads them is (open-responses-request.ts). */
export const echoedDefaults = () => ({
  truncation: only(
    'auto',
    'truncation can only be "auto": Turnline compacts the context when it fills up',
  ).describe('Only `auto` (Turnline compacts the context).'),
  presence_penalty: only(0, 'presence_penalty can only be 0: penalties are not supported').describe(
    'Only 0.',
  ),
  frequency_penalty: only(
    0,
    'frequency_penalty can only be 0: penalties are not supported',
  ).describe('Only 0.'),
  top_logprobs: only(0, 'top_logprobs can only be 0: log probabilities are not returned').describe(
    'Only 0.',
  ),
  service_tier: z
    .enum(['auto', 'default'], { error: 'service_tier can only be "auto" or "default"' })
    .nullish()
    .describe('`auto` or `default` (the response says `default`).'),
  include: z
    .array(z.string().max(100))
    .max(0, 'include is not supported: the response carries everything Turnline returns')
    .nullish()
    .describe('Only empty.'),
  stream_options: z
    .strictObject({
      include_obfuscation: z.boolean().nullish().describe('Ignored: no obfuscation is sent.'),
    })
    .nullish()
    .describe('Accepted; nothing to configure.'),
  safety_identifier: z
    .null({ error: 'safety_identifier is not supported' })
    .optional()
    .describe('Only null (what the response echoes).'),
  prompt_cache_key: z
    .null({ error: 'prompt_cache_key is not supported: the provider caches on its own' })
    .optional()
    .describe('Only null (what the response echoes).'),
  text: z
    .strictObject({
      format: z
        .discriminatedUnion(
          'type',
          [
            z.strictObject({ type: z.literal('text').describe('Plain text.') }),
            TextFormatJsonSchema,
          ],
          { error: 'text.format.type can be "text" or "json_schema"' },
        )
        .nullish()
        .describe('The output format: `{type: "text"}`, or `{type: "json_schema", name, schema}`.'),
    })
    .nullish()
    .describe('Output text settings: the format of the answer.'),
  user: z.string().max(256).nullish().describe('Deprecated end-user identifier; ignored.'),
})
