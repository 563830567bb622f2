import { open } from 'node:fs/promises'
import { packagedRankTables, type RankTableSource } from '../../src/core/session-service.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'

/**
 * The token counter's rank tables on Node, Deno and Lambda: the committed
 * `src/core/compaction/rank-tables/<encoding>.bin` read as bytes (≈ 3.7 MB for o200k, a
 * millisecond), from beside the built code (`npm run build` copies them into
 * dist/{node,deno,lambda}/rank-tables/, next to the entries and their chunks) or from the source
 * tree (tsx, `deno serve functions/entries/deno.ts`). Where neither can be read (a build copied
 * without them, Deno without --allow-read), the table is derived from gpt-tokenizer's ranks, as
 * slow to load as the package itself but the same counts.
 */
export const rankTableFiles: RankTableSource = async (encoding) => {
  for (const file of candidates(encoding)) {
    try {
      return await readWhole(file)
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

/**
 * A file's bytes in one read request of its size. `readFile` reads in 512 KiB pieces, each a
 * request to libuv's pool that the event loop must see end before it asks for the next: at a
 * start, with the main thread busy building the app, the o200k table's eight pieces finished
 * after the app did and held the server's listening (docs/performance.md, cold start).
 */
async function readWhole(file: URL): Promise<Uint8Array> {
  const handle = await open(file)
  try {
    const { size } = await handle.stat()
    const bytes = new Uint8Array(size)
    let filled = 0
    while (filled < size) {
      const { bytesRead } = await handle.read(bytes, filled, size - filled, filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    return filled === size ? bytes : bytes.subarray(0, filled)
  } finally {
    await handle.close()
  }
}
