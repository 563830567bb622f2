/**
 * gpt-tokenizer's ranks of one encoding → the bytes of a rank table (read by rank-table.ts).
 * `npx tsx infra/build/rank-tables.ts` writes them to `rank-tables/*.bin` (committed, so every
 * runtime reads them as they are); a runtime without those files derives them from the package
 * at its first count instead (bpe-tokenizer.ts).
 *
 * Format, version 1 (integers little-endian; the hash table at offset 16, so that it can be
 * viewed as an Int32Array where it was read):
 *   bytes 0–3    "TLRT"; 4–7: the version (u32); 8–11: N, the number of ranks; 12–15: S, the
 *                number of hash slots: the least power of two ≥ 2N, or 0 when the table leaves
 *                them out (the Worker's upload: infra/build/worker-rank-tables.mjs) and the
 *                reader computes them
 *   S × i32      the hash table: rank + 1, or 0 for an empty slot; a rank sits at
 *                `rankSlot(its bytes) & (S − 1)` or the first free slot after it (wrapping)
 *   N bytes      the length of rank r's byte string, 0 when gpt-tokenizer never finds it (below)
 *   then         the byte strings of ranks 0 … N−1, concatenated
 *
 * Which ranks gpt-tokenizer finds: it keeps a rank as a string when its bytes are UTF-8 and as a
 * byte array otherwise, and looks bytes up by decoding them when they are valid UTF-8 (the
 * decoder drops a leading byte-order mark) and among the byte arrays when they are not. A byte
 * array that is valid UTF-8 (nine ranks of o200k, eight of cl100k, each starting with a BOM) is
 * therefore never found, and is written with length 0; bpe-counter.ts applies the BOM rule.
 */

export const RANK_TABLE_MAGIC = [0x54, 0x4c, 0x52, 0x54] // "TLRT"
export const RANK_TABLE_VERSION = 1
export const RANK_TABLE_HEADER_BYTES = 16

/** One rank as gpt-tokenizer ships it: its text, or its bytes when they are not UTF-8. */
export type PackagedRank = string | readonly number[] | undefined

export function rankTableBytes(ranks: readonly PackagedRank[]): Uint8Array {
  const utf8 = new TextEncoder()
  const strict = new TextDecoder('utf-8', { fatal: true })
  const entries = ranks.map((rank) => {
    if (rank === undefined) return new Uint8Array(0)
    if (typeof rank === 'string') return utf8.encode(rank)
    const bytes = Uint8Array.from(rank)
    return isUtf8(strict, bytes) ? new Uint8Array(0) : bytes
  })
  const count = entries.length
  const slotCount = slotCountFor(count)
  const total = entries.reduce((sum, bytes) => sum + bytes.length, 0)
  const lengthsAt = RANK_TABLE_HEADER_BYTES + slotCount * 4
  const out = new Uint8Array(lengthsAt + count + total)
  const view = new DataView(out.buffer)
  out.set(RANK_TABLE_MAGIC)
  view.setUint32(4, RANK_TABLE_VERSION, true)
  view.setUint32(8, count, true)
  view.setUint32(12, slotCount, true)
  const starts = new Uint32Array(count + 1)
  let at = 0
  entries.forEach((bytes, rank) => {
    if (bytes.length > 255) throw new Error(`rank table: rank ${rank} is longer than 255 bytes`)
    out[lengthsAt + rank] = bytes.length
    out.set(bytes, lengthsAt + count + at)
    starts[rank] = at
    at += bytes.length
  })
  starts[count] = at
  const slots = hashSlots(out.subarray(lengthsAt + count), starts, slotCount)
  for (let slot = 0; slot < slotCount; slot++) {
    view.setInt32(RANK_TABLE_HEADER_BYTES + slot * 4, slots[slot] as number, true)
  }
  return out
}

/** The number of hash slots of a table of `count` ranks: a load of at most one half. */
export function slotCountFor(count: number): number {
  let size = 1
  while (size < count * 2) size *= 2
  return size
}

/**
 * The hash table of the ranks whose byte strings are `bytes[starts[r], starts[r + 1])`: rank + 1
 * per slot (0: empty). A rank of no bytes is not in it (one gpt-tokenizer never finds).
 */
export function hashSlots(bytes: Uint8Array, starts: Uint32Array, slotCount: number): Int32Array {
  const slots = new Int32Array(slotCount)
  const mask = slotCount - 1
  for (let rank = 0; rank + 1 < starts.length; rank++) {
    const start = starts[rank] as number
    const end = starts[rank + 1] as number
    if (end === start) continue
    let slot = rankSlot(bytes, start, end) & mask
    while (slots[slot] !== 0) slot = (slot + 1) & mask
    slots[slot] = rank + 1
  }
  return slots
}

/** A byte string's hash (FNV-1a, 32 bits): where its rank is, in the table's slots. */
export function rankSlot(data: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ (data[i] as number), 0x01000193)
  return hash >>> 0
}

function isUtf8(decoder: TextDecoder, bytes: Uint8Array): boolean {
  try {
    decoder.decode(bytes)
    return true
  } catch {
    return false
  }
}
