/**
 * Text → token count for compaction estimates. The engine loads a model's tokenizer only when
 * provider usage does not settle a decision. Every runtime counts with the same BPE rank tables
 * (src/core/compaction/bpe-tokenizer.ts); `approximateTokenizer` is a length
 * heuristic for tests and benches.
 */

export type EncodingName = 'o200k_base' | 'cl100k_base'

export interface Tokenizer {
  /** `o200k_base`, `cl100k_base`, or `approximate` for the length heuristic. */
  readonly encoding: EncodingName | 'approximate'
  count(text: string): number
}

/** Gives the tokenizer of a model; called only when an estimate needs one. */
export type TokenizerLoader = (model: string) => Promise<Tokenizer>

/** ≈ 4 characters per token for Latin text, one token per character beyond the BMP-Latin range. */
export const approximateTokenizer: Tokenizer = {
  encoding: 'approximate',
  count(text: string): number {
    if (text.length === 0) return 0
    let wide = 0
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x2fff) wide++
    return Math.ceil((text.length - wide) / 4) + wide
  },
}
