import { readFile } from 'node:fs/promises'
import { packagedRankTables, type RankTableSource } from '../../src/core/session-service.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'

/**
 * The token counter's rank tables on Node, Deno and Lambda: the committed
 * `src/core/compaction/rank-tables/<encoding>.bin` read as bytes (≈ 1.6 MB for o200k, a
 * millisecond), from beside the built code (`npm run build` copies them into
 * dist/{node,deno,lambda}/rank-tables/, next to the entries and their chunks) or from the source
 * tree (tsx, `deno serve functions/entries/deno.ts`). Where neither can be read (a build copied
 * without them, Deno without --allow-read), the table is derived from gpt-tokenizer's ranks, as
 * slow to load as the package itself but the same counts.
 */
export const rankTableFiles: RankTableSource = async (encoding) => {
  for (const file of candidates(encoding)) {
    try {
      return await readFile(file)
    } catch {
      // not there, or not readable: the next place
    }
  }
  return packagedRankTables(encoding)
}

function candidates(encoding: EncodingName): URL[] {
  return [
    `./rank-tables/${encoding}.bin`,
    `../rank-tables/${encoding}.bin`,
    `../../src/core/compaction/rank-tables/${encoding}.bin`,
  ].map((path) => new URL(path, import.meta.url))
}
