import * as z from 'zod'
import { encodeOrderedObject } from './json-value.ts'
import {
  CounterSchema,
  keysOf,
  Rfc3339Schema,
  readDocument,
  requireVersion,
  validateDocument,
  validateForWrite,
} from './stored-document.ts'

/**
 * `index/turns.json`: VT Code's TurnIndex, byte offsets of each turn in events.jsonl. Turnline
 * adds `format_version` after `entries` (VT Code ignores unknown fields); a file without it is
 * one VT Code wrote and reads as version 1.
 */

export const TURN_INDEX_FORMAT_VERSION = 1

export const TurnIndexEntrySchema = z
  .object({
    /** 1-based. */
    turn_number: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    /** Byte offset of the turn's first line (its turn.started). */
    start_offset: CounterSchema,
    /** Byte offset just past the turn's last line (newline included). */
    end_offset: CounterSchema,
    event_count: CounterSchema,
    ts: Rfc3339Schema,
  })
  .refine((entry) => entry.end_offset >= entry.start_offset, {
    message: 'end_offset is before start_offset',
    path: ['end_offset'],
  })
export type TurnIndexEntry = z.infer<typeof TurnIndexEntrySchema>

export const TurnIndexSchema = z.object({
  entries: z.array(TurnIndexEntrySchema),
  format_version: z.literal(TURN_INDEX_FORMAT_VERSION).optional(),
})
export type TurnIndex = z.infer<typeof TurnIndexSchema>

const WHAT = 'turn index'
const KEYS = keysOf(TurnIndexSchema)
const ENTRY_KEYS = keysOf(TurnIndexEntrySchema)

/** Reads index/turns.json. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export function parseTurnIndex(input: Uint8Array | string): TurnIndex {
  const doc = readDocument(input, WHAT)
  requireVersion(doc, 'format_version', [TURN_INDEX_FORMAT_VERSION], WHAT, { optional: true })
  return validateDocument(TurnIndexSchema, doc, WHAT)
}

/** Compact JSON of a turn index (always with `format_version`). */
export function serializeTurnIndex(index: TurnIndex): string {
  const valid = validateForWrite(TurnIndexSchema, index, WHAT)
  return encodeOrderedObject(
    { entries: valid.entries, format_version: TURN_INDEX_FORMAT_VERSION },
    KEYS,
    (key, member) =>
      key === 'entries'
        ? `[${(member as TurnIndexEntry[]).map((entry) => encodeOrderedObject(entry, ENTRY_KEYS)).join(',')}]`
        : JSON.stringify(member),
  )
}
