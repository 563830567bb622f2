import { workerRankTables } from '../../functions/entries/worker-rank-tables.ts'
import { loadTokenizer, useRankTables } from '../../src/core/compaction/bpe-tokenizer.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'

/**
 * A Worker that counts tokens as the Turnline Worker does (its rank tables as Data modules):
 * POST /count `{ encoding, texts }` → the counts. test/runtime/rank-tables-runtimes.test.ts.
 */
useRankTables(workerRankTables)

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== 'POST') return new Response('ok')
    const { encoding, texts } = (await request.json()) as {
      encoding: EncodingName
      texts: string[]
    }
    const tokenizer = await loadTokenizer(encoding)
    return Response.json(texts.map((text) => tokenizer.count(text)))
  },
}
