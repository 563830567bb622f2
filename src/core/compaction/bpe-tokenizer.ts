/**
 * Text → token count, by model. gpt-tokenizer's BPE ranks are large (o200k ≈ 2.7 MB), so an
 * encoding is imported only when first asked for, and only that one encoding (never the
 * all-encodings resolver). The Worker bundle aliases the two encoding modules to ones built from
 * the same rank tables shipped as text (functions/entries/worker-rank-table.ts): the same counts.
 */
import type { EncodingName, Tokenizer } from '../../ports/tokenizer.ts'
import { countInPieces } from './counting-pieces.ts'

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

interface EncodingModule {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number
  setMergeCacheSize(size: number): void
}

/**
 * Entries of the encoding's merge cache (piece → tokens; the library keeps 100,000). Pieces are at
 * most a few hundred characters (counting-pieces.ts), so this bounds the cache to a few MB
 * whatever text passed through, and still holds every word that recurs.
 */
export const MERGE_CACHE_ENTRIES = 10_000

/** Special-token text (`<|endoftext|>`) in a transcript is counted as ordinary text. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() }

const loaded = new Map<EncodingName, Promise<Tokenizer>>()

/** The tokenizer of one encoding, imported on first use and shared afterwards. */
export function loadTokenizer(encoding: EncodingName): Promise<Tokenizer> {
  let pending = loaded.get(encoding)
  if (!pending) {
    pending = importEncoding(encoding).then((module) => {
      module.setMergeCacheSize(MERGE_CACHE_ENTRIES)
      const piece = (text: string) => module.countTokens(text, PLAIN_TEXT)
      return {
        encoding,
        // Linear in the text: the library alone is quadratic in a run without spaces.
        count: (text: string) => (text.length === 0 ? 0 : countInPieces(text, piece)),
      }
    })
    // A failed import is not cached, so a later call may retry.
    pending.catch(() => loaded.delete(encoding))
    loaded.set(encoding, pending)
  }
  return pending
}

export function tokenizerForModel(model: string): Promise<Tokenizer> {
  return loadTokenizer(encodingForModel(model))
}

/** Literal specifiers, so a bundler splits each encoding into its own chunk. */
async function importEncoding(encoding: EncodingName): Promise<EncodingModule> {
  if (encoding === 'cl100k_base') return import('gpt-tokenizer/encoding/cl100k_base')
  return import('gpt-tokenizer/encoding/o200k_base')
}
