import type { EncodingName } from '../../ports/tokenizer.ts'
import type { PackagedRank } from './rank-table-bytes.ts'

/**
 * gpt-tokenizer's ranks of one encoding (its `bpeRanks` module: an array literal, ≈ 90 ms of
 * CPU to compile for o200k). Literal specifiers, so a bundler splits each into its own chunk.
 */
export async function packagedRanks(encoding: EncodingName): Promise<readonly PackagedRank[]> {
  const module =
    encoding === 'cl100k_base'
      ? await import('gpt-tokenizer/esm/bpeRanks/cl100k_base')
      : await import('gpt-tokenizer/esm/bpeRanks/o200k_base')
  return module.default
}
