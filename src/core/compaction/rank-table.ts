/**
 * A BPE encoding's ranks as typed arrays over a rank table's bytes (rank-table-bytes.ts gives the
 * format): every rank's byte string in one buffer, and the precomputed open-addressing hash table
 * from byte string to rank. Loading one views the bytes where they were read and sums the
 * lengths into offsets, a few milliseconds (computing the hash table where a table leaves it out,
 * ≈ 15–30 ms), where gpt-tokenizer compiled a 2.4 MB array literal
 * and filled 200,000-entry Maps in ≈ 150 ms (docs/performance.md, "The rank table as bytes").
 */
import {
  hashSlots,
  RANK_TABLE_HEADER_BYTES,
  RANK_TABLE_MAGIC,
  RANK_TABLE_VERSION,
  rankSlot,
  slotCountFor,
} from './rank-table-bytes.ts'

export interface RankTable {
  /** The ranks' byte strings, concatenated. */
  readonly bytes: Uint8Array
  /** Where rank r's byte string starts in `bytes`; it ends where rank r + 1's starts. */
  readonly starts: Uint32Array
  /** Rank + 1 per slot (0: empty), at the slot {@link rankSlot} gives, or a later one. */
  readonly slots: Int32Array
  readonly mask: number
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/** The table of a rank table's bytes; throws when they are not format version 1. */
export function readRankTable(data: Uint8Array): RankTable {
  if (
    data.length < RANK_TABLE_HEADER_BYTES ||
    RANK_TABLE_MAGIC.some((byte, i) => data[i] !== byte)
  ) {
    throw new Error('rank table: not a rank table')
  }
  const header = new DataView(data.buffer, data.byteOffset, RANK_TABLE_HEADER_BYTES)
  const version = header.getUint32(4, true)
  if (version !== RANK_TABLE_VERSION) throw new Error(`rank table: format version ${version}`)
  const count = header.getUint32(8, true)
  const slotCount = header.getUint32(12, true)
  const lengthsAt = RANK_TABLE_HEADER_BYTES + slotCount * 4
  if ((slotCount !== 0 && slotCount !== slotCountFor(count)) || data.length < lengthsAt + count) {
    throw new Error('rank table: truncated or malformed')
  }
  const lengths = data.subarray(lengthsAt, lengthsAt + count)
  const bytes = data.subarray(lengthsAt + count)
  const starts = new Uint32Array(count + 1)
  let at = 0
  for (let rank = 0; rank < count; rank++) {
    starts[rank] = at
    at += lengths[rank] as number
  }
  starts[count] = at
  if (at !== bytes.length) throw new Error('rank table: lengths and bytes disagree')
  if (slotCount === 0) {
    // Left out (the Worker's upload): computed here, ≈ 15–30 ms for o200k.
    const size = slotCountFor(count)
    return { bytes, starts, slots: hashSlots(bytes, starts, size), mask: size - 1 }
  }
  return { bytes, starts, slots: slotsOf(data, slotCount), mask: slotCount - 1 }
}

/** The hash table as Int32Array: a view where the bytes allow one, else a copy. */
function slotsOf(data: Uint8Array, slotCount: number): Int32Array {
  const at = data.byteOffset + RANK_TABLE_HEADER_BYTES
  if (LITTLE_ENDIAN && at % 4 === 0) return new Int32Array(data.buffer, at, slotCount)
  const view = new DataView(data.buffer, at, slotCount * 4)
  return Int32Array.from({ length: slotCount }, (_, slot) => view.getInt32(slot * 4, true))
}

/** The rank of `data[start, end)`, or -1 when no rank has those bytes. */
export function rankOf(table: RankTable, data: Uint8Array, start: number, end: number): number {
  const { bytes, starts, slots, mask } = table
  const length = end - start
  let slot = rankSlot(data, start, end) & mask
  for (;;) {
    const entry = slots[slot] as number
    if (entry === 0) return -1
    const rankStart = starts[entry - 1] as number
    if ((starts[entry] as number) - rankStart === length) {
      let i = 0
      while (i < length && bytes[rankStart + i] === data[start + i]) i++
      if (i === length) return entry - 1
    }
    slot = (slot + 1) & mask
  }
}
