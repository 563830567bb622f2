import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { OutputArtifactIdSchema } from './output-artifact.ts'
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
 * back; version 3 (written only for a turn whose input had text over the inline limit) is
 * version 2 plus `input_artifacts`: that text is kept whole as output artifacts of the session
 * and the record's `input` holds its preview (src/core/turn/kept-input.ts). Version 4 (written
 * only for a turn that applied a follow-up whose text was over the inline limit) is version 3
 * with `input_artifacts` optional and a follow-up's own `input_artifacts`: its `text` is the
 * preview of the artifact named there (kept when `POST …/intents` accepted it).
 */
export const TURN_INPUT_RECORD_VERSION = 1
export const STORED_TURN_INPUT_VERSION = 2
export const KEPT_TURN_INPUT_VERSION = 3
export const KEPT_FOLLOW_UP_INPUT_VERSION = 4

/** A text of a turn's input kept whole as an output artifact (its preview is in `input`). */
export const InputArtifactRefSchema = lazySchema(() =>
  z
    .strictObject({
      artifact_id: OutputArtifactIdSchema.describe(
        'The artifact holding the text whole: `GET /v1/sessions/{id}/artifacts/{artifact_id}`.',
      ),
      size: z.int().min(0).describe('Bytes of the text (UTF-8).'),
      lines: z.int().min(0).describe('Lines of the text.'),
    })
    .meta({ id: 'InputArtifactRef', description: 'A text of the input kept whole by reference.' }),
)
export type InputArtifactRef = z.infer<typeof InputArtifactRefSchema>

export const InputArtifactsSchema = lazySchema(() =>
  z
    .array(InputArtifactRefSchema)
    .min(1)
    .max(64)
    .describe(
      "Texts of `input` over the inline limit (`TURNLINE_TOOL_MAX_RESPONSE_BYTES`), kept whole as artifacts of the session: `input` holds each one's preview (its head and tail and a notice naming the artifact), in the order they appear.",
    ),
)

const StoredIntentInputSchema = lazySchema(() =>
  z.object({
    intent_id: z.string().min(1).describe('The follow-up id (`POST …/intents` answered it).'),
    text: z.string().describe('Its text (its preview when it was kept as an artifact).'),
  }),
)

export const IntentInputSchema = lazySchema(() =>
  z.object({
    ...StoredIntentInputSchema.shape,
    input_artifacts: InputArtifactsSchema.max(1)
      .optional()
      .describe(
        "The follow-up's text was over the inline limit: kept whole as this artifact of the session, `text` holds its preview.",
      ),
  }),
)

export type IntentInput = z.infer<typeof IntentInputSchema>

export const TurnInputRecordSchema = lazySchema(() =>
  z
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
      input_artifacts: InputArtifactsSchema.optional(),
    })
    .meta({ id: 'TurnInputRecord', description: 'What one turn was asked.' }),
)
export type TurnInputRecord = z.infer<typeof TurnInputRecordSchema>

/** An image part of a version 2 record: a stored image, by reference. */
export const StoredInputImagePartSchema = lazySchema(() =>
  z.strictObject({
    type: z.literal('input_image'),
    image: ImageRefSchema,
    detail: ImageDetailSchema.optional(),
  }),
)

/** The record as version 2 stores it. */
export const TurnInputRecordV2Schema = lazySchema(() =>
  z.object({
    version: z.literal(STORED_TURN_INPUT_VERSION),
    input: z
      .union([
        z.string().min(1),
        z
          .array(z.union([InputTextPartSchema, InputImagePartSchema, StoredInputImagePartSchema]))
          .min(1),
      ])
      .optional(),
    follow_ups: z.array(StoredIntentInputSchema).optional(),
  }),
)
export type TurnInputRecordV2 = z.infer<typeof TurnInputRecordV2Schema>

/** The record as version 3 stores it: version 2 with the texts kept as artifacts named. */
export const TurnInputRecordV3Schema = lazySchema(() =>
  z.object({
    ...TurnInputRecordV2Schema.shape,
    version: z.literal(KEPT_TURN_INPUT_VERSION),
    input_artifacts: InputArtifactsSchema,
  }),
)
export type TurnInputRecordV3 = z.infer<typeof TurnInputRecordV3Schema>

/** The record as version 4 stores it: version 3 with follow-ups kept as artifacts named. */
export const TurnInputRecordV4Schema = lazySchema(() =>
  z.object({
    ...TurnInputRecordV2Schema.shape,
    version: z.literal(KEPT_FOLLOW_UP_INPUT_VERSION),
    follow_ups: TurnInputRecordSchema.shape.follow_ups,
    input_artifacts: InputArtifactsSchema.optional(),
  }),
)
export type TurnInputRecordV4 = z.infer<typeof TurnInputRecordV4Schema>

/** A record of a version this build cannot read: kept as an unknown JSON object. */
export const StoredTurnInputSchema = lazySchema(() =>
  z.union([
    TurnInputRecordSchema,
    TurnInputRecordV2Schema,
    TurnInputRecordV3Schema,
    TurnInputRecordV4Schema,
    z.looseObject({ version: z.number().int().min(5) }),
  ]),
)
export type StoredTurnInput = z.infer<typeof StoredTurnInputSchema>

/**
 * A record this build reads: version 1 (input as given), 2 (images by reference), 3 (and texts
 * kept as artifacts) or 4 (and follow-ups kept as artifacts).
 */
export type ReadableTurnInput =
  | TurnInputRecord
  | TurnInputRecordV2
  | TurnInputRecordV3
  | TurnInputRecordV4

const READABLE_VERSIONS: readonly number[] = [
  TURN_INPUT_RECORD_VERSION,
  STORED_TURN_INPUT_VERSION,
  KEPT_TURN_INPUT_VERSION,
  KEPT_FOLLOW_UP_INPUT_VERSION,
]

/** The record, when this build reads its version. */
export function readableTurnInput(
  stored: StoredTurnInput | undefined,
): ReadableTurnInput | undefined {
  return stored !== undefined && READABLE_VERSIONS.includes(stored.version)
    ? (stored as ReadableTurnInput)
    : undefined
}

/**
 * The record of a turn started with `input` (if any) after the queued `followUps`; `kept`: the
 * texts of the input kept as artifacts (then `input` holds their previews).
 */
export function turnInputRecord(
  input: TurnInput | undefined,
  followUps: readonly { id: string; text: string; artifacts?: InputArtifactRef[] | undefined }[],
  kept: readonly InputArtifactRef[] = [],
): TurnInputRecord {
  return {
    version: TURN_INPUT_RECORD_VERSION,
    ...(input === undefined ? {} : { input }),
    ...(followUps.length ? { follow_ups: followUps.map(followUpOf) } : {}),
    ...(kept.length ? { input_artifacts: [...kept] } : {}),
  }
}

function followUpOf(intent: {
  id: string
  text: string
  artifacts?: InputArtifactRef[] | undefined
}): IntentInput {
  return {
    intent_id: intent.id,
    text: intent.text,
    ...(intent.artifacts?.length ? { input_artifacts: [...intent.artifacts] } : {}),
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
