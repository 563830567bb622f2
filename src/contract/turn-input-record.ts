import * as z from 'zod'
import { type TurnInput, TurnInputSchema } from './turn-input.ts'

/**
 * What a turn was asked, on the record: Turnline's own field of the batch that starts the turn
 * (`turn_input`, committed with its `turn.started`), next to VT Code's events — which carry no
 * user text (`turn.started` has no fields, `interjected` only counts images). It is never an
 * event or an item: VT Code's readers refuse an unknown item type, and `events.jsonl` stays
 * VT Code's. `GET /v1/sessions/{id}/turns` lists these records, one per turn.
 *
 * Versioned on its own (`version`), so the batch format it rides in does not change: a reader
 * that predates it ignores the field; one that meets a newer version reads the turn as having
 * no recorded input.
 */
export const TURN_INPUT_RECORD_VERSION = 1

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

/** A record of a version this build cannot read: kept as an unknown JSON object. */
export const StoredTurnInputSchema = z.union([
  TurnInputRecordSchema,
  z.looseObject({ version: z.number().int().min(2) }),
])
export type StoredTurnInput = z.infer<typeof StoredTurnInputSchema>

/** The record, when this build reads its version. */
export function readableTurnInput(
  stored: StoredTurnInput | undefined,
): TurnInputRecord | undefined {
  return stored !== undefined && stored.version === TURN_INPUT_RECORD_VERSION
    ? (stored as TurnInputRecord)
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
export function titleOf(record: TurnInputRecord): string | undefined {
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
