import * as z from 'zod'
import { documentCodec, Rfc3339Schema } from './stored-document.ts'

/**
 * `intents/<n:010d>.json` in a session's folder: one accepted steering intent that no commit has
 * applied yet, kept where the coordinator does not keep intents itself (the in-process one of
 * the embedded default). Written create-only when the intent is accepted (before its 202),
 * numbered in the order of acceptance; deleted once the batch that applied it committed (the
 * batch records the id in `applied_intents`).
 */
export const PENDING_INTENT_FORMAT = 'turnline.pending-intent'
export const PENDING_INTENT_VERSION = 1

export const PendingIntentSchema = z.object({
  format: z.literal(PENDING_INTENT_FORMAT),
  version: z.literal(PENDING_INTENT_VERSION),
  /** The id answered with the 202, carried by the user message that applies it. */
  id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
  text: z.string(),
  accepted_at: Rfc3339Schema,
})
export type PendingIntent = z.infer<typeof PendingIntentSchema>

const codec = documentCodec(PendingIntentSchema, {
  format: PENDING_INTENT_FORMAT,
  version: PENDING_INTENT_VERSION,
  what: 'pending intent',
})

/** Reads a pending intent. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export const parsePendingIntent: (input: Uint8Array | string) => PendingIntent = codec.parse

/** Compact JSON of a pending intent. */
export const serializePendingIntent: (intent: PendingIntent) => string = codec.serialize
