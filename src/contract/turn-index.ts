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

const encodeEntries = (entries: readonly TurnIndexEntry[]) =>
  entries.map((entry) => encodeOrderedObject(entry, ENTRY_KEYS)).join(',')

/** Compact JSON of a turn index (always with `format_version`). */
export function serializeTurnIndex(index: TurnIndex): string {
  const valid = validateForWrite(TurnIndexSchema, index, WHAT)
  return encodeOrderedObject(
    { entries: valid.entries, format_version: TURN_INDEX_FORMAT_VERSION },
    KEYS,
    (key, member) =>
      key === 'entries' ? `[${encodeEntries(member as TurnIndexEntry[])}]` : JSON.stringify(member),
  )
}

/** What follows the last entry in `serializeTurnIndex`'s text: the end of the entries array. */
export const TURN_INDEX_TAIL = `],"format_version":${TURN_INDEX_FORMAT_VERSION}}`

/**
 * The text that replaces `TURN_INDEX_TAIL` at the end of a serialized index of `before` entries
 * to make it the serialized index with `added` after them — byte for byte what
 * `serializeTurnIndex` writes for all of them — so a store that appends grows the index by the
 * new entries alone instead of rewriting it.
 */
export function serializeTurnIndexAppend(before: number, added: readonly TurnIndexEntry[]): string {
  const valid = validateForWrite(TurnIndexSchema, { entries: [...added] }, WHAT)
  return `${before > 0 && added.length > 0 ? ',' : ''}${encodeEntries(valid.entries)}${TURN_INDEX_TAIL}`
}

/**
 * The entries of an index whose last append was cut short (a crash inside it): the longest run
 * of whole entries at its head, when the text is `serializeTurnIndex`'s up to there. Undefined
 * when no such run parses (a damaged index, or one VT Code wrote).
 */
export function salvageTurnIndex(input: Uint8Array): TurnIndex | undefined {
  const text = new TextDecoder().decode(input)
  // Entries are flat objects: each `}` ends one. A torn append cut at most the entries it added.
  const ends = [...text.matchAll(/\}/g)].map((match) => match.index + 1)
  const head = '{"entries":['
  const candidates = [...ends.slice(-8).reverse(), ...(text.startsWith(head) ? [head.length] : [])]
  for (const end of candidates) {
    try {
      return parseTurnIndex(`${text.slice(0, end)}${TURN_INDEX_TAIL}`)
    } catch {
      // not a whole entry's end: try the one before
    }
  }
  return undefined
}
