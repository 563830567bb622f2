/**
 * Counts a text's tokens by byte-pair encoding over a {@link RankTable}, with the counts
 * gpt-tokenizer's `countTokens(text, { disallowedSpecial: new Set() })` gives (checked against
 * it over a varied corpus in test/unit/compaction-bpe-counter.test.ts):
 *
 * - the text is split by the encoding's pre-tokenizer pattern (gpt-tokenizer's own RegExp);
 *   special-token text (`<|endoftext|>`) is ordinary text;
 * - a piece that is one rank (compared as a string: a piece with a lone surrogate never is)
 *   counts 1;
 * - otherwise its UTF-8 bytes (a lone surrogate as U+FFFD) start as one part per byte, and the
 *   adjacent pair of lowest rank (the first of equals) is merged until no pair is a rank; the
 *   count is the number of parts left.
 *
 * A pair's rank is looked up as gpt-tokenizer looks it up: bytes that are valid UTF-8 are
 * decoded first, and decoding drops a leading byte-order mark (EF BB BF), so such a pair has the
 * rank of the bytes after the mark. Counts of merged pieces are kept in a bounded cache.
 */
import { type RankTable, rankOf } from './rank-table.ts'

export interface BpeCounter {
  count(text: string): number
}

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
/** With the `u` flag only a surrogate without its other half is a code point of its own. */
const LONE_SURROGATE = /\p{Cs}/u

/**
 * A counter over one table; `pattern` is the pre-tokenizer's (its flags are kept).
 * Long: one closure over the table, the cache and the merge's scratch arrays, the hot path.
 */
export function bpeCounter(table: RankTable, pattern: RegExp, cacheEntries: number): BpeCounter {
  const splitter = new RegExp(
    pattern.source,
    pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`,
  )
  const cache = new Map<string, number>()
  let buffer = new Uint8Array(1024)
  // The parts of the piece being merged, each named by the index of its first byte: where the
  // next and the previous part start, and the rank of the pair it starts (or -1).
  let nextPart = new Int32Array(1024)
  let previousPart = new Int32Array(1024)
  let pairRank = new Int32Array(1024)

  function pairRankAt(bytes: Uint8Array, start: number, end: number): number {
    if (
      end - start >= 3 &&
      bytes[start] === 0xef &&
      bytes[start + 1] === 0xbb &&
      bytes[start + 2] === 0xbf &&
      isUtf8(bytes.subarray(start, end))
    ) {
      return rankOf(table, bytes, start + 3, end)
    }
    return rankOf(table, bytes, start, end)
  }

  /** The number of parts `bytes[0, length)` merges into. */
  function mergedParts(bytes: Uint8Array, length: number): number {
    if (nextPart.length < length + 1) {
      nextPart = new Int32Array(length * 2)
      previousPart = new Int32Array(length * 2)
      pairRank = new Int32Array(length * 2)
    }
    for (let i = 0; i <= length; i++) {
      nextPart[i] = i + 1
      previousPart[i] = i - 1
    }
    for (let i = 0; i + 1 < length; i++) pairRank[i] = pairRankAt(bytes, i, i + 2)
    pairRank[length - 1] = -1
    let parts = length
    while (parts > 1) {
      let best = -1
      let bestRank = 0x7fffffff
      for (let i = 0; i < length; i = nextPart[i] as number) {
        const rank = pairRank[i] as number
        if (rank >= 0 && rank < bestRank) {
          bestRank = rank
          best = i
        }
      }
      if (best < 0) break
      // Part `best` absorbs the part after it.
      const absorbed = nextPart[best] as number
      nextPart[best] = nextPart[absorbed] as number
      parts--
      const end = nextPart[best] as number
      previousPart[end] = best
      pairRank[best] = end < length ? pairRankAt(bytes, best, nextPart[end] as number) : -1
      if (best > 0) {
        const previous = previousPart[best] as number
        pairRank[previous] = pairRankAt(bytes, previous, end)
      }
    }
    return parts
  }

  function countPiece(piece: string): number {
    if (piece.length === 1 && piece.charCodeAt(0) < 0x80) return 1
    if (buffer.length < piece.length * 3) buffer = new Uint8Array(piece.length * 3)
    const length = utf8.encodeInto(piece, buffer).written
    if (rankOf(table, buffer, 0, length) >= 0 && (length === piece.length || wellFormed(piece))) {
      return 1
    }
    const cached = cache.get(piece)
    if (cached !== undefined) {
      // Most recently used last: the oldest entry is the first one dropped.
      cache.delete(piece)
      cache.set(piece, cached)
      return cached
    }
    const parts = mergedParts(buffer, length)
    if (cache.size >= cacheEntries) cache.delete(cache.keys().next().value as string)
    cache.set(piece, parts)
    return parts
  }

  return {
    count(text: string): number {
      let total = 0
      splitter.lastIndex = 0
      for (let match = splitter.exec(text); match !== null; match = splitter.exec(text)) {
        total += countPiece(match[0])
      }
      return total
    },
  }
}

function wellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text)
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    strictUtf8.decode(bytes)
    return true
  } catch {
    return false
  }
}
