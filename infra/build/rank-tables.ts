/**
 * Writes the token counter's rank tables, src/core/compaction/rank-tables/<encoding>.bin, from
 * the installed gpt-tokenizer's ranks (format: src/core/compaction/rank-table-bytes.ts). Run it
 * after upgrading gpt-tokenizer; test/unit/compaction-rank-tables.test.ts fails while a
 * committed table differs from what the package gives.
 *
 *   npx tsx infra/build/rank-tables.ts
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { packagedRanks } from '../../src/core/compaction/packaged-ranks.ts'
import { rankTableBytes } from '../../src/core/compaction/rank-table-bytes.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'

export const RANK_TABLE_ENCODINGS: readonly EncodingName[] = ['o200k_base', 'cl100k_base']

/** Where the committed table of one encoding is. */
export function rankTableFile(encoding: EncodingName): string {
  return fileURLToPath(
    new URL(`../../src/core/compaction/rank-tables/${encoding}.bin`, import.meta.url),
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const encoding of RANK_TABLE_ENCODINGS) {
    const bytes = rankTableBytes(await packagedRanks(encoding))
    writeFileSync(rankTableFile(encoding), bytes)
    console.log(`${rankTableFile(encoding)}: ${bytes.length} bytes`)
  }
}
