import { rankTableFiles } from '../../functions/entries/rank-table-files.ts'
import { loadTokenizer, useRankTables } from '../../src/core/compaction/bpe-tokenizer.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'

declare const Deno: { args: string[]; readTextFileSync(path: string): string }

/**
 * Counts tokens as the Deno entry does (the committed rank tables read from the source tree):
 * `deno run --allow-read count-deno.ts ENCODING TEXTS.json` prints the counts as JSON.
 * test/runtime/rank-tables-runtimes.test.ts.
 */
useRankTables(rankTableFiles)
const [encoding, file] = Deno.args as [EncodingName, string]
const texts = JSON.parse(Deno.readTextFileSync(file)) as string[]
const tokenizer = await loadTokenizer(encoding)
console.log(JSON.stringify(texts.map((text) => tokenizer.count(text))))
