import * as z from 'zod'
import { fractionalNumbers, type NumberLexeme, valueSpan } from '../shared/json-scan.ts'
import { referContents, resolveContents } from './batch-content-refs.ts'
import { decodeStoredText } from './corrupt-data.ts'
import { TurnlineError } from './errors.ts'
import { HistoryMessageSchema, historyMessagesSchema } from './history-message.ts'
import { assertJsonObject } from './json-check.ts'
import { encodeOrderedObject, encodePlainMember } from './json-value.ts'
import { StoredKeptHookAnswersSchema } from './kept-hook-answers.ts'
import { lazySchema } from './lazy-schema.ts'
import { parseVersionedValue, serializeVersioned } from './serialize.ts'
import {
  CounterSchema,
  keysOf,
  Rfc3339Schema,
  readDocument,
  requireFormat,
  requireVersion,
  validateDocument,
  validateForWrite,
} from './stored-document.ts'
import type { VersionedThreadEvent } from './thread-event.ts'
import { StoredTurnInputSchema } from './turn-input-record.ts'

/**
 * A commit batch, `log/<n:010d>.json`: the one commit point of a session. Written create-only;
 * holds the events of the batch (as canonical versioned lines, in order), the transcript delta,
 * the turn engine's state, the idempotency key and the intent ids applied by the batch. Stored as
 * its JSON text (versions 1–4), that text gzip-compressed (versions 5–6) or either (version 7 on:
 * batch-encoding.ts).
 */

export const BATCH_FORMAT = 'turnline.batch'
/**
 * 2: assistant messages of the transcript delta may carry `reasoning` and `parts`; 3: and the
 * `order` of their blocks (history-message.ts); 4: a message whose content an event of the batch
 * holds names that event's item instead (`content_of`, batch-content-refs.ts); 5: the same
 * document, stored gzip-compressed (batch-encoding.ts); 6: and `state` holds only the fields the
 * batch changed (shallow: a field is written whole when its value changed), so the state after a
 * batch is the fold of the batches before it (state-through.ts); 7: the same document, stored as
 * its text or compressed, as the writer chose (batch-encoding.ts). Versions 1–6 are still read,
 * each with its own message schema, and written back as they were.
 */
export const BATCH_VERSION = 7
const READABLE_VERSIONS = [1, 2, 3, 4, 5, 6, 7] as const

export const HistoryDeltaSchema = lazySchema(() =>
  z.object({
    /** True when the segment starts over (compaction, context reset) before `append`. */
    reset: z.boolean().optional(),
    append: z.array(HistoryMessageSchema),
  }),
)
export type HistoryDelta = z.infer<typeof HistoryDeltaSchema>

/** Opaque session state owned by the turn engine: any JSON object. */
export const EngineStateSchema: z.ZodType<Record<string, unknown>> = lazySchema(() =>
  z.record(z.string(), z.json()),
)

const BatchFieldsSchema = lazySchema(() =>
  z.object({
    format: z.literal(BATCH_FORMAT),
    version: z.union([
      z.literal(1),
      z.literal(2),
      z.literal(3),
      z.literal(4),
      z.literal(5),
      z.literal(6),
      z.literal(BATCH_VERSION),
    ]),
    batch: CounterSchema,
    /** Seq of the first event of this batch. */
    first_seq: CounterSchema,
    /** Validated one by one as versioned events after the rest of the document. */
    events: z.array(z.unknown()).min(1, 'a batch holds at least one event'),
    committed_at: Rfc3339Schema,
    /** Random id of the commit attempt: tells our own retried PUT from another writer's. */
    commit_id: z.string().min(1).max(64).optional(),
    turn_id: z.string().min(1).optional(),
    idempotency_key: z.string().min(1).optional(),
    history: HistoryDeltaSchema.optional(),
    state: EngineStateSchema.optional(),
    applied_intents: z.array(z.string().min(1)).optional(),
    /**
     * On the batch that starts a turn (holding its `turn.started`): what the turn was asked
     * (turn-input-record.ts, versioned on its own). Added without a batch version bump: a reader
     * that predates it ignores it.
     */
    turn_input: StoredTurnInputSchema.optional(),
    /**
     * The hook answers kept whole as output artifacts by the hooks whose effect this batch
     * commits (kept-hook-answers.ts, versioned on its own). Added without a batch version bump,
     * as `turn_input`: a reader that predates it ignores it.
     */
    hook_answers: StoredKeptHookAnswersSchema.optional(),
  }),
)

export type Batch = Omit<z.infer<typeof BatchFieldsSchema>, 'events'> & {
  events: VersionedThreadEvent[]
}

const WHAT = 'batch'
const KEYS = keysOf(BatchFieldsSchema)
/** The state is checked apart (assertJsonObject): it is the bulk of a batch, and plain JSON. */
const WRITE_SCHEMA = lazySchema(() => BatchFieldsSchema.omit({ events: true, state: true }))

/** Reads a batch. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export function parseBatch(input: Uint8Array | string): Batch {
  const text = decodeStoredText(input, WHAT)
  const doc = readDocument(text, WHAT)
  requireFormat(doc, 'format', BATCH_FORMAT, WHAT)
  requireVersion(doc, 'version', READABLE_VERSIONS, WHAT)
  const history = doc.history as Record<string, unknown> | undefined
  if (
    typeof doc.version === 'number' &&
    doc.version >= 4 &&
    typeof history === 'object' &&
    history !== null
  ) {
    const events = Array.isArray(doc.events) ? doc.events : []
    doc.history = { ...history, append: resolveContents(history.append, events, WHAT) }
  }
  const fields = validateDocument(BatchFieldsSchema, doc, WHAT)
  if (fields.history && (fields.version === 1 || fields.version === 2)) {
    const read = historyMessagesSchema(fields.version)
    const append = validateDocument(read, fields.history.append, WHAT)
    fields.history = { ...fields.history, append }
  }
  const spelled = numbersByEvent(text)
  const events = fields.events.map((entry, i) => {
    const source = () => {
      const span = valueSpan(text, ['events', i, 'event'])
      return span === undefined ? '' : text.slice(span.start, span.end)
    }
    return parseVersionedValue(entry, source, spelled.get(i), `${WHAT} ${fields.batch} event ${i}`)
  })
  return { ...fields, events }
}

/**
 * Compact JSON of a batch; each event is written exactly as its events.jsonl line. `lines`, when
 * given, are those lines already serialized (one per event, by `serializeVersioned`), written
 * as they are.
 */
export function serializeBatch(batch: Batch, lines?: readonly string[]): string {
  const valid = validateForWrite(WRITE_SCHEMA, batch, WHAT)
  if (batch.state !== undefined) assertJsonObject(batch.state, `${WHAT}: state`)
  if (batch.events.length === 0) {
    throw new TurnlineError('internal', 'cannot write batch: a batch holds at least one event')
  }
  if (lines && lines.length !== batch.events.length) {
    throw new TurnlineError('internal', 'cannot write batch: one serialized line per event')
  }
  const written = lines ?? batch.events.map(serializeVersioned)
  const history =
    valid.history && batch.version >= 4
      ? { ...valid.history, append: referContents(valid.history.append, written) }
      : valid.history
  const document = {
    ...valid,
    ...(history === undefined ? {} : { history }),
    ...(batch.state === undefined ? {} : { state: batch.state }),
    events: batch.events,
  }
  return encodeOrderedObject(document, KEYS, (key, member) =>
    key === 'events' ? `[${written.join(',')}]` : encodePlainMember(key, member),
  )
}

/** Numbers spelled with a fraction, grouped by event index, relative to each versioned entry. */
function numbersByEvent(text: string): Map<number, NumberLexeme[]> {
  const grouped = new Map<number, NumberLexeme[]>()
  for (const { path, lexeme } of fractionalNumbers(text)) {
    const index = path[1]
    if (path[0] !== 'events' || typeof index !== 'number') continue
    const list = grouped.get(index) ?? []
    list.push({ path: path.slice(2), lexeme })
    grouped.set(index, list)
  }
  return grouped
}
