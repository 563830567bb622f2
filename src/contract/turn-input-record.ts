import * as z from 'zod'
import { ImageRefSchema } from './stored-image.ts'
import {
  ImageDetailSchema,
  InputImagePartSchema,
  InputTextPartSchema,
  type TurnInput,
  TurnInputSchema,
} from './turn-input.ts'

/**
 * What a turn was asked, on the record: Turnline's own field of the batch that starts the turn
 * (`turn_input`, committed with its `turn.started`), next to VT Code's events — which carry no
 * user text (`turn.started` has no fields, `interjected` only counts images). It is never an
 * event or an item: VT Code's readers refuse an unknown item type, and `events.jsonl` stays
 * VT Code's. `GET /v1/sessions/{id}/turns` lists these records, one per turn.
 *
 * Versioned on its own (`version`), so the batch format it rides in does not change: a reader
 * that predates it ignores the field; one that meets a newer version reads the turn as having
 * no recorded input. Version 1 ({@link TurnInputRecordSchema}, also what the API lists) keeps
 * the input exactly as given; version 2 (what is written) names a `data:` image stored in the
 * session's folder by reference (stored-image.ts) instead of inline, and the listing loads it
 * back.
 */
export const TURN_INPUT_RECORD_VERSION = 1
export const STORED_TURN_INPUT_VERSION = 2

export const IntentInputSchema = z.object({
  intent_id: z.string().min(1).describe('The follow-up id (`POST …/intents` answered it).'),
  text: z.string().describe('Its text.'),
})

export const TurnInputRecordSchema = z
  .object({
    version: z
      .literal(TURN_INPUT_RECORD_VERSION)
      .describe('Version of this record (1); a newer one is listed without its input.'),
    input: TurnInputSchema.optional().describe(
      "The turn's `input` exactly as the request gave it (a string, or `input_text` and `input_image` parts); absent when the turn had none.",
    ),
    follow_ups: z
      .array(IntentInputSchema)
      .optional()
      .describe(
        'Follow-ups queued with `POST …/intents` and applied as the turn started, in order (they come before `input` in the transcript).',
      ),
  })
  .meta({ id: 'TurnInputRecord', description: 'What one turn was asked.' })
export type TurnInputRecord = z.infer<typeof TurnInputRecordSchema>

/** An image part of a version 2 record: a stored image, by reference. */
export const StoredInputImagePartSchema = z.strictObject({
  type: z.literal('input_image'),
  image: ImageRefSchema,
  detail: ImageDetailSchema.optional(),
})

/** The record as version 2 stores it. */
export const TurnInputRecordV2Schema = z.object({
  version: z.literal(STORED_TURN_INPUT_VERSION),
  input: z
    .union([
      z.string().min(1),
      z
        .array(z.union([InputTextPartSchema, InputImagePartSchema, StoredInputImagePartSchema]))
        .min(1),
    ])
    .optional(),
  follow_ups: TurnInputRecordSchema.shape.follow_ups,
})
export type TurnInputRecordV2 = z.infer<typeof TurnInputRecordV2Schema>

/** A record of a version this build cannot read: kept as an unknown JSON object. */
export const StoredTurnInputSchema = z.union([
  TurnInputRecordSchema,
  TurnInputRecordV2Schema,
  z.looseObject({ version: z.number().int().min(3) }),
])
export type StoredTurnInput = z.infer<typeof StoredTurnInputSchema>

/** A record this build reads: version 1 (input as given) or 2 (images by reference). */
export type ReadableTurnInput = TurnInputRecord | TurnInputRecordV2

/** The record, when this build reads its version. */
export function readableTurnInput(
  stored: StoredTurnInput | undefined,
): ReadableTurnInput | undefined {
  return stored !== undefined &&
    (stored.version === TURN_INPUT_RECORD_VERSION || stored.version === STORED_TURN_INPUT_VERSION)
    ? (stored as ReadableTurnInput)
    : undefined
}

/** The record of a turn started with `input` (if any) after the queued `followUps`. */
export function turnInputRecord(
  input: TurnInput | undefined,
  followUps: readonly { id: string; text: string }[],
): TurnInputRecord {
  return {
    version: TURN_INPUT_RECORD_VERSION,
    ...(input === undefined ? {} : { input }),
    ...(followUps.length
      ? { follow_ups: followUps.map((intent) => ({ intent_id: intent.id, text: intent.text })) }
      : {}),
  }
}

/** Longest title a session summary shows. */
export const TITLE_MAX_CHARS = 120

/**
 * A session's title from its first recorded turn input: the text (the text parts, or the first
 * follow-up's) with runs of white space collapsed, at most {@link TITLE_MAX_CHARS} characters
 * (an ellipsis marks a cut). Undefined when the turn held no text.
 */
export function titleOf(record: ReadableTurnInput): string | undefined {
  const input = record.input
  const text =
    typeof input === 'string'
      ? input
      : input !== undefined
        ? input.flatMap((part) => (part.type === 'input_text' ? [part.text] : [])).join(' ')
        : (record.follow_ups?.[0]?.text ?? '')
  const flat = text.replace(/\s+/g, ' ').trim()
  if (flat === '') return undefined
  const chars = Array.from(flat)
  return chars.length <= TITLE_MAX_CHARS ? flat : `${chars.slice(0, TITLE_MAX_CHARS - 1).join('')}…`
}
