import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import type { SessionConfig } from './session-config.ts'

/**
 * A response of `POST /v1/responses` is a session; what its response resource echoes and the
 * session config does not hold (creation second, the model as the client named it, the
 * requested tool-call cap) is kept in the session's metadata under this key, so
 * `GET /v1/responses/:id` and the derived view rebuild exactly the response the client saw.
 * Client metadata may not use the `turnline:` prefix.
 */
export const RESPONSE_RECORD_KEY = 'turnline:open_responses'
export const RESERVED_METADATA_PREFIX = 'turnline:'

/** Structured output: the answer is JSON following `schema` (sent to the provider, strict). */
export const TextFormatJsonSchema = lazySchema(() =>
  z.strictObject({
    type: z.literal('json_schema').describe('JSON following `schema`.'),
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 characters from A-Z a-z 0-9 _ -')
      .describe("The format's name."),
    description: z.string().max(4000).nullish().describe('What the format is for.'),
    schema: z.record(z.string(), z.unknown()).describe('JSON Schema of the answer.'),
    strict: z.boolean().nullish().describe('Sent strict in any case: the answer must follow it.'),
  }),
)
export type TextFormatJson = z.infer<typeof TextFormatJsonSchema>

const RecordSchema = lazySchema(() =>
  z.object({
    v: z.literal(1),
    created_at: z.number().int().nonnegative(),
    model: z.string(),
    max_tool_calls: z.number().int().positive().nullable(),
    /** The response this one continues (absent in records written before it was kept). */
    previous_response_id: z.string().nullable().optional(),
    /** A background response (`background: true`): the work that runs its turn. */
    background: z.object({ work_id: z.string() }).optional(),
    /** The structured-output format the response echoes (absent: plain text). */
    text_format: TextFormatJsonSchema.optional(),
    /** `store: false`: the session is erased once the response ends (absent: kept). */
    store: z.literal(false).optional(),
    /**
     * Digest of the conversation the request's `input` carried before its turn's input (its
     * earlier messages, calls and call outputs), so a retry under the same Idempotency-Key with
     * another conversation is refused (absent in records written before it was kept).
     */
    input_digest: z.string().optional(),
    /**
     * Its output items are shown with ids unique across responses, `<engine item id>_<session
     * id>` (absent in records written before: the engine's `item_<n>`, as they were shown).
     */
    scoped_item_ids: z.literal(true).optional(),
  }),
)
export type ResponseRecord = z.infer<typeof RecordSchema>

export function encodeResponseRecord(record: ResponseRecord): string {
  return JSON.stringify(record)
}

/** A record (as stored) marked as a background response's, run by the work `workId`. */
export function withBackgroundWork(raw: string, workId: string): string {
  const record = RecordSchema.parse(JSON.parse(raw))
  return encodeResponseRecord({ ...record, background: { work_id: workId } })
}

/** The record of a session created by `POST /v1/responses`, or undefined for other sessions. */
export function responseRecordOf(config: SessionConfig): ResponseRecord | undefined {
  return parseRecordOf(config.metadata[RESPONSE_RECORD_KEY])
}

/** A response record as stored in a session's metadata, or undefined when it is not one. */
export function parseRecordOf(raw: string | undefined): ResponseRecord | undefined {
  if (raw === undefined) return undefined
  try {
    const parsed = RecordSchema.safeParse(JSON.parse(raw))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}
