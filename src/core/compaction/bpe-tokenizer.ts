/**
 * Text → token count, by model: our own BPE counter (bpe-counter.ts) over gpt-tokenizer's ranks
 * as a compact table of bytes (rank-table.ts), with gpt-tokenizer's counts. An encoding is loaded
 * only when first asked for, and only that one. Its table comes from the runtime's
 * {@link RankTableSource}: the committed `rank-tables/*.bin` read as bytes where an entry sets one
 * (Node, Deno, Lambda: functions/entries/rank-table-files.ts; the Worker: Data modules), else
 * derived from the package's ranks at first use.
 */
import type { EncodingName, Tokenizer } from '../../ports/tokenizer.ts'
import { bpeCounter } from './bpe-counter.ts'
import { countInPieces } from './counting-pieces.ts'
import { packagedRanks } from './packaged-ranks.ts'
import { readRankTable } from './rank-table.ts'
import { rankTableBytes } from './rank-table-bytes.ts'

/**
 * cl100k for the families that predate gpt-4o (gpt-4, gpt-4-turbo, gpt-3.5, the ada/3 embedding
 * models, davinci-002/babbage-002); o200k for gpt-4o and later, the o-series, gpt-5 and any model
 * we do not know. A provider prefix (`openai/gpt-4o`) is ignored.
 */
export function encodingForModel(model: string): EncodingName {
  const name = (model.split('/').pop() ?? model).trim().toLowerCase()
  if (/^gpt-4(?:-|$)/.test(name)) return 'cl100k_base'
  if (/^gpt-3\.5|^gpt-35/.test(name)) return 'cl100k_base'
  if (/^text-embedding-(?:ada-002|3-)/.test(name)) return 'cl100k_base'
  if (/^(?:davinci|babbage)-002$/.test(name)) return 'cl100k_base'
  return 'o200k_base'
}

/** The bytes of an encoding's rank table (rank-table-bytes.ts gives the format). */
export type RankTableSource = (encoding: EncodingName) => Promise<Uint8Array>

/** Derives the table from gpt-tokenizer's ranks: works on every runtime, at ≈ the package's cost. */
export const packagedRankTables: RankTableSource = async (encoding) =>
  rankTableBytes(await packagedRanks(encoding))

let rankTables: RankTableSource = packagedRankTables

/** Where encodings loaded from now on read their tables (an entry's choice, before it counts). */
export function useRankTables(source: RankTableSource): void {
  rankTables = source
}

/**
 * Entries of the counter's cache (merged piece → its count). Pieces are at most a few hundred
 * characters (counting-pieces.ts), so this bounds the cache to a few MB whatever text passed
 * through, and still holds every word that recurs.
 */
export const MERGE_CACHE_ENTRIES = 10_000

const loaded = new Map<EncodingName, Promise<Tokenizer>>()

/** The tokenizer of one encoding, imported on first use and shared afterwards. */
export function loadTokenizer(encoding: EncodingName): Promise<Tokenizer> {
  let pending = loaded.get(encoding)
  if (!pending) {
    pending = Promise.all([rankTables(encoding), splitPatterns()]).then(([bytes, patterns]) => {
      const pattern =
        encoding === 'cl100k_base'
          ? patterns.CL100K_TOKEN_SPLIT_REGEX
          : patterns.O200K_TOKEN_SPLIT_REGEX
      const counter = bpeCounter(readRankTable(bytes), pattern, MERGE_CACHE_ENTRIES)
      return {
        encoding,
        // Linear in the text: merging a piece is quadratic in its length.
        count: (text: string) => (text.length === 0 ? 0 : countInPieces(text, counter.count)),
      }
    })
    // A failed load is not cached, so a later call may retry.
    pending.catch(() => loaded.delete(encoding))
    loaded.set(encoding, pending)
  }
  return pending
}

export function tokenizerForModel(model: string): Promise<Tokenizer> {
  return loadTokenizer(encodingForModel(model))
}

/**
 * The encodings' pre-tokenizer patterns, gpt-tokenizer's own (so the pieces are the ones its
 * counts are made of); imported with the first encoding, so a bundle loads the package on demand.
 */
function splitPatterns() {
  return import('gpt-tokenizer/esm/encodingParams/constants')
}
