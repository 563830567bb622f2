/**
 * Text → token count, by model. gpt-tokenizer's BPE ranks are large (o200k ≈ 2.7 MB), so an
 * encoding is imported only when first asked for, and only that one encoding (never the
 * all-encodings resolver). Where loading it is not worth it, {@link approximateTokenizer}
 * estimates from the text length.
 */

export type EncodingName = 'o200k_base' | 'cl100k_base'

export interface Tokenizer {
  /** `o200k_base`, `cl100k_base`, or `approximate` for the length heuristic. */
  readonly encoding: EncodingName | 'approximate'
  count(text: string): number
}

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
}

/** Special-token text (`<|endoftext|>`) in a transcript is counted as ordinary text. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() }

const loaded = new Map<EncodingName, Promise<Tokenizer>>()

/** The tokenizer of one encoding, imported on first use and shared afterwards. */
export function loadTokenizer(encoding: EncodingName): Promise<Tokenizer> {
  let pending = loaded.get(encoding)
  if (!pending) {
    pending = importEncoding(encoding).then((module) => ({
      encoding,
      count: (text: string) => (text.length === 0 ? 0 : module.countTokens(text, PLAIN_TEXT)),
    }))
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
