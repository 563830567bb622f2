import * as z from 'zod'
import { encodeOrderedObject } from './json-value.ts'
import { lazySchema } from './lazy-schema.ts'
import {
  keysOf,
  Rfc3339Schema,
  readDocument,
  requireFormat,
  requireVersion,
  validateDocument,
  validateForWrite,
} from './stored-document.ts'
import { InputArtifactsSchema } from './turn-input-record.ts'

/**
 * `intents/<n:010d>.json` in a session's folder: one accepted steering intent that no commit has
 * applied yet, kept where the coordinator does not keep intents itself (the in-process one of
 * the embedded default). Written create-only when the intent is accepted (before its 202),
 * numbered in the order of acceptance; deleted once the batch that applied it committed (the
 * batch records the id in `applied_intents`).
 *
 * Version 1 holds the text as given; version 2 (written only for a follow-up whose text was over
 * the inline limit) holds its preview and `input_artifacts`, the artifact keeping it whole
 * (src/core/turn/kept-input.ts). Both are read.
 */
export const PENDING_INTENT_FORMAT = 'turnline.pending-intent' as const
export const PENDING_INTENT_VERSION = 1
export const KEPT_PENDING_INTENT_VERSION = 2

const PendingIntentV1Schema = lazySchema(() =>
  z.object({
    format: z.literal(PENDING_INTENT_FORMAT),
    version: z.literal(PENDING_INTENT_VERSION),
    /** The id answered with the 202, carried by the user message that applies it. */
    id: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
    text: z.string(),
    accepted_at: Rfc3339Schema,
  }),
)

const PendingIntentV2Schema = lazySchema(() =>
  z.object({
    ...PendingIntentV1Schema.shape,
    version: z.literal(KEPT_PENDING_INTENT_VERSION),
    /** `text` is the preview of these texts, kept whole as artifacts of the session. */
    input_artifacts: InputArtifactsSchema,
  }),
)

export type PendingIntent =
  | z.infer<typeof PendingIntentV1Schema>
  | z.infer<typeof PendingIntentV2Schema>

const WHAT = 'pending intent'
const V1_KEYS = keysOf(PendingIntentV1Schema)
const V2_KEYS = keysOf(PendingIntentV2Schema)

/** Reads a pending intent. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export function parsePendingIntent(input: Uint8Array | string): PendingIntent {
  const doc = readDocument(input, WHAT)
  requireFormat(doc, 'format', PENDING_INTENT_FORMAT, WHAT)
  requireVersion(doc, 'version', [PENDING_INTENT_VERSION, KEPT_PENDING_INTENT_VERSION], WHAT)
  return doc.version === PENDING_INTENT_VERSION
    ? validateDocument(PendingIntentV1Schema, doc, WHAT)
    : validateDocument(PendingIntentV2Schema, doc, WHAT)
}

/** Compact JSON of a pending intent. */
export function serializePendingIntent(intent: PendingIntent): string {
  return intent.version === PENDING_INTENT_VERSION
    ? encodeOrderedObject(validateForWrite(PendingIntentV1Schema, intent, WHAT), V1_KEYS)
    : encodeOrderedObject(validateForWrite(PendingIntentV2Schema, intent, WHAT), V2_KEYS)
}

/** The stored form of an intent accepted at `acceptedAt` (version 2 when texts of it were kept). */
export function pendingIntentOf(
  intent: { id: string; text: string; artifacts?: PendingArtifacts | undefined },
  acceptedAt: string,
): PendingIntent {
  const base = { format: PENDING_INTENT_FORMAT, id: intent.id, text: intent.text }
  return intent.artifacts?.length
    ? {
        ...base,
        version: KEPT_PENDING_INTENT_VERSION,
        accepted_at: acceptedAt,
        input_artifacts: intent.artifacts,
      }
    : { ...base, version: PENDING_INTENT_VERSION, accepted_at: acceptedAt }
}

type PendingArtifacts = z.infer<typeof PendingIntentV2Schema>['input_artifacts']
