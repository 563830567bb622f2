import * as z from 'zod'
import { corruptData, decodeStoredText, invalidShape, parseJsonText } from './corrupt-data.ts'
import { TurnlineError } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * VT Code's session memory envelope (`SessionMemoryEnvelope`, schema version 3), written next to a
 * compaction's history artifact as `<stem>.memory.json` and rendered into the compacted history as
 * a system message. Read leniently as serde does (absent or null optionals, absent lists → []),
 * written as serde_json's pretty output: keys in declaration order, absent optionals as null.
 */
export const MEMORY_ENVELOPE_SCHEMA_VERSION = 3
/** Envelope files name their stem after the history artifact: `<stem>.memory.json`. */
export const MEMORY_ENVELOPE_SUFFIX = '.memory.json'
/** Steering intents accepted and not yet applied (queued + in flight). */
export const MAX_PENDING_INTENTS = 16
/** FIFO window of applied intent ids. */
export const MAX_APPLIED_INTENT_IDS = 64
/** Lists other than touched_files keep this many newest entries when merged. */
export const MEMORY_LIST_LIMIT = 5

const OptionalText = lazySchema(() =>
  z
    .string()
    .nullish()
    .transform((value) => value ?? undefined),
)
const TextList = lazySchema(() =>
  z
    .array(z.string())
    .nullish()
    .transform((value) => value ?? []),
)

export const GroundedFactSchema = lazySchema(() =>
  z.object({ fact: z.string(), source: z.string() }),
)
export type GroundedFact = z.infer<typeof GroundedFactSchema>

export const QueuedIntentSchema = lazySchema(() =>
  z.object({ id: z.string().min(1), text: z.string() }),
)
export type QueuedIntent = z.infer<typeof QueuedIntentSchema>

export const MemoryEnvelopeSchema = lazySchema(() =>
  z.object({
    session_id: z
      .string()
      .nullish()
      .transform((value) => value ?? ''),
    schema_version: z
      .number()
      .int()
      .nonnegative()
      .nullish()
      .transform((value) => value ?? undefined),
    summary: z.string(),
    objective: OptionalText,
    task_summary: OptionalText,
    spec_summary: OptionalText,
    evaluation_summary: OptionalText,
    verification_summary: OptionalText,
    constraints: TextList,
    grounded_facts: z
      .array(GroundedFactSchema)
      .nullish()
      .transform((value) => value ?? []),
    touched_files: TextList,
    open_questions: TextList,
    verification_todo: TextList,
    delegation_notes: TextList,
    pending_intents: z
      .array(QueuedIntentSchema)
      .max(MAX_PENDING_INTENTS)
      .nullish()
      .transform((value) => value ?? []),
    applied_intent_ids: z
      .array(z.string().min(1))
      .max(MAX_APPLIED_INTENT_IDS)
      .nullish()
      .transform((value) => value ?? []),
    history_artifact_path: OptionalText,
    generated_at: z.string().min(1),
  }),
)
export type MemoryEnvelope = z.output<typeof MemoryEnvelopeSchema>

/** Field order of the serde struct, which is the order serde_json writes. */
const FIELD_ORDER = [
  'session_id',
  'schema_version',
  'summary',
  'objective',
  'task_summary',
  'spec_summary',
  'evaluation_summary',
  'verification_summary',
  'constraints',
  'grounded_facts',
  'touched_files',
  'open_questions',
  'verification_todo',
  'delegation_notes',
  'pending_intents',
  'applied_intent_ids',
  'history_artifact_path',
  'generated_at',
] as const satisfies readonly (keyof MemoryEnvelope)[]

const WHAT = 'memory envelope'

/** Parses an envelope document (bytes or text). Versions 1–3 are read; newer ones refused. */
export function parseMemoryEnvelope(input: Uint8Array | string): MemoryEnvelope {
  const text = decodeStoredText(input, WHAT)
  if (text.trim() === '') throw corruptData(WHAT, 'empty', { reason: 'empty' })
  return memoryEnvelopeFromValue(parseJsonText(text, WHAT))
}

export function memoryEnvelopeFromValue(value: unknown): MemoryEnvelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw corruptData(WHAT, 'not a JSON object', { reason: 'invalid_shape' })
  }
  const version = (value as { schema_version?: unknown }).schema_version
  if (
    typeof version === 'number' &&
    Number.isInteger(version) &&
    version > MEMORY_ENVELOPE_SCHEMA_VERSION
  ) {
    throw new TurnlineError(
      'unsupported_version',
      `memory envelope schema_version ${version} is newer than ${MEMORY_ENVELOPE_SCHEMA_VERSION}`,
      { details: { what: WHAT, schema_version: version } },
    )
  }
  const result = MemoryEnvelopeSchema.safeParse(value)
  if (!result.success) throw invalidShape(WHAT, result.error)
  return result.data
}

/**
 * serde_json's `to_string_pretty` of the envelope: two-space indent, declaration order, absent
 * optionals as null. Always written as the current schema version; limits are checked first.
 */
export function serializeMemoryEnvelope(envelope: MemoryEnvelope): string {
  const current = { ...envelope, schema_version: MEMORY_ENVELOPE_SCHEMA_VERSION }
  const checked = MemoryEnvelopeSchema.safeParse(current)
  if (!checked.success) {
    throw new TurnlineError(
      'invalid_input',
      `memory envelope is invalid: ${z.prettifyError(checked.error)}`,
    )
  }
  const ordered: Record<string, unknown> = {}
  for (const key of FIELD_ORDER) ordered[key] = checked.data[key] ?? null
  return JSON.stringify(ordered, null, 2)
}

/** `.vtcode/history/<stem>.jsonl` → `.vtcode/history/<stem>.memory.json`. */
export function memoryEnvelopePath(historyArtifactPath: string): string {
  const stem = historyArtifactPath.endsWith('.jsonl')
    ? historyArtifactPath.slice(0, -'.jsonl'.length)
    : historyArtifactPath
  return `${stem}${MEMORY_ENVELOPE_SUFFIX}`
}
