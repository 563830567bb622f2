import * as z from 'zod'
import { EngineStateSchema } from './batch.ts'
import { corruptData } from './corrupt-data.ts'
import { TurnlineError } from './errors.ts'
import { HistoryMessageSchema, historyMessagesSchema } from './history-message.ts'
import { assertJsonObject } from './json-check.ts'
import { encodeOrderedObject } from './json-value.ts'
import { lazySchema } from './lazy-schema.ts'
import { SessionStatusSchema } from './session-manifest.ts'
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

/**
 * A checkpoint, `state/<n:010d>.json`: the folded session state after batch `n`, so rehydration
 * reads the newest checkpoint plus the batches after it instead of the whole log. Derived data:
 * a checkpoint that is missing or unreadable can be rebuilt from the batches.
 */

export const CHECKPOINT_FORMAT = 'turnline.checkpoint'
/**
 * 2: the transcript's assistant messages may carry `reasoning` and `parts`; 3: and the `order` of
 * their blocks (as batch versions 2 and 3); 4: the transcript may be named instead of written
 * (`history_from`): the batches still hold it, so a checkpoint need not write it again.
 */
export const CHECKPOINT_VERSION = 4
const READABLE_VERSIONS = [1, 2, 3, 4] as const

/**
 * Where a checkpoint's transcript is, when it does not hold it (version 4): the transcript of the
 * checkpoint at batch `checkpoint` (none: an empty one) followed by the transcript deltas of the
 * batches from `batch` through the checkpoint's own, folded in order (a delta that resets starts
 * over).
 */
export const HistoryFromSchema = lazySchema(() =>
  z.object({
    checkpoint: CounterSchema.optional(),
    batch: CounterSchema,
  }),
)
export type HistoryFrom = z.infer<typeof HistoryFromSchema>
/** Newest applied intent ids kept (VT Code MAX_APPLIED_FOLLOW_UP_INTENT_IDS). */
export const MAX_APPLIED_INTENT_IDS = 64

export const CheckpointSchema = lazySchema(() =>
  z.object({
    format: z.literal(CHECKPOINT_FORMAT),
    version: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(CHECKPOINT_VERSION)]),
    /** The batch this checkpoint folds through. */
    batch: CounterSchema,
    /** Seq the next committed event gets. */
    next_seq: CounterSchema,
    turn_count: CounterSchema,
    status: SessionStatusSchema,
    /** Transcript of the current request segment only; or, from version 4, `history_from`. */
    history: z.array(HistoryMessageSchema).optional(),
    history_from: HistoryFromSchema.optional(),
    state: EngineStateSchema.optional(),
    /** Newest applied intent ids, oldest first. */
    applied_intents: z.array(z.string().min(1)).max(MAX_APPLIED_INTENT_IDS),
    created_at: Rfc3339Schema,
    updated_at: Rfc3339Schema,
    /**
     * The session's title: its first recorded turn input, trimmed (turn-input-record.ts). Optional
     * and added without a version bump: a reader that predates it ignores it.
     */
    title: z.string().min(1).optional(),
  }),
)
export type Checkpoint = z.infer<typeof CheckpointSchema>

const WHAT = 'checkpoint'
/** The checkpoint's fields in order, read from its schema at the first write. */
let keys: readonly string[] | undefined

/** Reads a checkpoint. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export function parseCheckpoint(input: Uint8Array | string): Checkpoint {
  const doc = readDocument(input, WHAT)
  requireFormat(doc, 'format', CHECKPOINT_FORMAT, WHAT)
  requireVersion(doc, 'version', READABLE_VERSIONS, WHAT)
  const { history_from, ...read } = validateDocument(CheckpointSchema, doc, WHAT)
  // Only version 4 names its transcript; a field by that name in an older one is not read.
  const named = read.version === CHECKPOINT_VERSION ? history_from : undefined
  if ((read.history === undefined) === (named === undefined)) {
    throw corruptData(WHAT, 'a checkpoint holds its transcript or (version 4) names it, not both')
  }
  if (named) {
    const inOrder =
      named.batch <= read.batch + 1 &&
      (named.checkpoint === undefined || named.checkpoint < named.batch)
    if (!inOrder) throw corruptData(WHAT, 'history_from names batches after the checkpoint')
    return { ...read, history_from: named }
  }
  if (read.version === 1 || read.version === 2) {
    return {
      ...read,
      history: validateDocument(historyMessagesSchema(read.version), doc.history, WHAT),
    }
  }
  return read
}

/** Compact JSON of a checkpoint. */
export function serializeCheckpoint(checkpoint: Checkpoint): string {
  if ((checkpoint.history === undefined) === (checkpoint.history_from === undefined)) {
    throw new TurnlineError('internal', 'cannot write checkpoint: history or history_from, one')
  }
  keys ??= keysOf(CheckpointSchema)
  const valid = validateForWrite(CheckpointWriteSchema, checkpoint, WHAT)
  if (checkpoint.state === undefined) return encodeOrderedObject(valid, keys)
  assertJsonObject(checkpoint.state, `${WHAT}: state`)
  return encodeOrderedObject({ ...valid, state: checkpoint.state }, keys)
}

/**
 * The state is checked apart (assertJsonObject), as a batch's is: it is plain JSON, and its schema
 * (a JSON value's, a reference cycle) would keep the rest from zod's compiled parser.
 */
export const CheckpointWriteSchema = lazySchema(() => CheckpointSchema.omit({ state: true }))
