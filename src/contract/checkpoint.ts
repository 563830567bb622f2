import * as z from 'zod'
import { EngineStateSchema } from './batch.ts'
import { HistoryMessageSchema, historyMessagesSchema } from './history-message.ts'
import { encodeOrderedObject } from './json-value.ts'
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
 * their blocks (as batch versions 2 and 3).
 */
export const CHECKPOINT_VERSION = 3
const READABLE_VERSIONS = [1, 2, 3] as const
/** Newest applied intent ids kept (VT Code MAX_APPLIED_FOLLOW_UP_INTENT_IDS). */
export const MAX_APPLIED_INTENT_IDS = 64

export const CheckpointSchema = z.object({
  format: z.literal(CHECKPOINT_FORMAT),
  version: z.union([z.literal(1), z.literal(2), z.literal(CHECKPOINT_VERSION)]),
  /** The batch this checkpoint folds through. */
  batch: CounterSchema,
  /** Seq the next committed event gets. */
  next_seq: CounterSchema,
  turn_count: CounterSchema,
  status: SessionStatusSchema,
  /** Transcript of the current request segment only. */
  history: z.array(HistoryMessageSchema),
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
})
export type Checkpoint = z.infer<typeof CheckpointSchema>

const WHAT = 'checkpoint'
const KEYS = keysOf(CheckpointSchema)

/** Reads a checkpoint. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export function parseCheckpoint(input: Uint8Array | string): Checkpoint {
  const doc = readDocument(input, WHAT)
  requireFormat(doc, 'format', CHECKPOINT_FORMAT, WHAT)
  requireVersion(doc, 'version', READABLE_VERSIONS, WHAT)
  const checkpoint = validateDocument(CheckpointSchema, doc, WHAT)
  if (checkpoint.version !== CHECKPOINT_VERSION) {
    const read = historyMessagesSchema(checkpoint.version)
    return { ...checkpoint, history: validateDocument(read, doc.history, WHAT) }
  }
  return checkpoint
}

/** Compact JSON of a checkpoint. */
export function serializeCheckpoint(checkpoint: Checkpoint): string {
  return encodeOrderedObject(validateForWrite(CheckpointSchema, checkpoint, WHAT), KEYS)
}
