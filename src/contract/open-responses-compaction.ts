import * as z from 'zod'
import { base64Bytes, toBase64 } from '../shared/base64.ts'
import { TurnlineError } from './errors.ts'
import { type HistoryMessage, HistoryMessageSchema } from './history-message.ts'
import { lazySchema } from './lazy-schema.ts'
import { InputItemSchema } from './open-responses-input.ts'
import type { ListedContent } from './open-responses-input-items.ts'

/**
 * `POST /v1/responses/compact` (the specification's `compactResponse`): a conversation
 * compacted as a session compacts its transcript (docs/compaction.md), answered as the
 * specification's compacted response: the user messages the compaction kept, then one
 * `compaction` item standing for the whole compacted conversation. Sent back as an input item
 * (of `POST /v1/responses` or of another compaction) the item is that conversation again.
 *
 * The item's `encrypted_content` is opaque to the client and not encrypted: it is the compacted
 * transcript (format `turnline.compaction`, version 1, base64 JSON; images as `data:` URLs),
 * which says nothing a client could not send as messages itself.
 */
export const COMPACTION_FORMAT = 'turnline.compaction'
export const COMPACTION_VERSION = 1
const PREFIX = `${COMPACTION_FORMAT}.v${COMPACTION_VERSION}:`

export const ResponsesCompactRequestSchema = lazySchema(() =>
  z.strictObject({
    model: z
      .string()
      .min(1)
      .max(200)
      .nullish()
      .describe('The model that writes the summary; absent → the deployment default.'),
    input: z
      .union([z.string().min(1).max(1_000_000), z.array(InputItemSchema).min(1).max(1024)])
      .nullish()
      .describe('The conversation to compact: a user message, or input items.'),
    previous_response_id: z
      .string()
      .regex(/^resp_[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'not a response id of this server')
      .nullish()
      .describe("Compact that response's whole conversation (then `input`, if any)."),
    instructions: z
      .string()
      .max(200_000)
      .nullish()
      .describe('System instructions of the conversation (not of the summary).'),
  }),
)
export type ResponsesCompactRequest = z.infer<typeof ResponsesCompactRequestSchema>

export const CompactResourceSchema = lazySchema(() =>
  z
    .object({
      id: z.string().describe('`cmp_<id>`: the compaction (nothing is kept to read back).'),
      object: z.literal('response.compaction').describe('Always `response.compaction`.'),
      output: z
        .array(
          z.looseObject({
            type: z.string().describe('`message`, then one `compaction`.'),
          }),
        )
        .describe(
          'The user messages the compaction kept (`message` items), then one `compaction` item `{type, id, encrypted_content}`: send them back as `input`, followed by what comes next.',
        ),
      created_at: z.number().int().describe('Unix seconds when it was compacted.'),
      usage: z.looseObject({}).describe('Open Responses usage of the summary call.'),
    })
    .meta({ id: 'CompactResource', description: 'A compacted conversation.' }),
)

/** What `POST /v1/responses/compact` answers (the specification's `CompactResource`). */
export interface CompactResource {
  id: string
  object: 'response.compaction'
  /** The user messages the compaction kept, then the compaction item of the whole of it. */
  output: (
    | { type: 'message'; id: string; status: 'completed'; role: 'user'; content: ListedContent[] }
    | { type: 'compaction'; id: string; encrypted_content: string }
  )[]
  created_at: number
  /** Open Responses usage of the summary call. */
  usage: {
    input_tokens: number
    output_tokens: number
    total_tokens: number
    input_tokens_details: { cached_tokens: number }
    output_tokens_details: { reasoning_tokens: number }
  }
}

function base64(text: string): string {
  return toBase64(new TextEncoder().encode(text))
}

/** The `encrypted_content` of a compaction item standing for `messages` (images loaded). */
export function encodeCompaction(messages: readonly HistoryMessage[]): string {
  return (
    PREFIX +
    base64(JSON.stringify({ format: COMPACTION_FORMAT, version: COMPACTION_VERSION, messages }))
  )
}

const CompactionDocumentSchema = lazySchema(() =>
  z.object({
    format: z.literal(COMPACTION_FORMAT),
    version: z.literal(COMPACTION_VERSION),
    messages: z.array(HistoryMessageSchema).max(100_000),
  }),
)

/**
 * The conversation a compaction item stands for; invalid_input naming `field` when the item was
 * not made by this server's `POST /v1/responses/compact`.
 */
export function decodeCompaction(encrypted: string, field: string): HistoryMessage[] {
  const refuse = (why: string) =>
    new TurnlineError(
      'invalid_input',
      `${why}: a compaction item is sent back as POST /v1/responses/compact answered it`,
      { details: { field } },
    )
  if (!encrypted.startsWith(PREFIX)) throw refuse('not a compaction item of this server')
  let value: unknown
  try {
    const bytes = base64Bytes(encrypted.slice(PREFIX.length))
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    throw refuse('its encrypted_content is damaged')
  }
  const parsed = CompactionDocumentSchema.safeParse(value)
  if (!parsed.success) throw refuse('its encrypted_content is damaged')
  // Images travel inline: a reference would name another session's stored image.
  const stored = parsed.data.messages.some(
    (message) =>
      message.role === 'user' &&
      (message.images?.some((image) => 'sha256' in image) ||
        message.files?.some((file) => 'sha256' in file)),
  )
  if (stored) throw refuse('its encrypted_content is damaged')
  return parsed.data.messages
}
