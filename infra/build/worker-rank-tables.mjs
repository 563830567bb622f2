// The token counter's rank tables for the Worker's upload: the committed
// src/core/compaction/rank-tables/*.bin without their precomputed hash tables (format version 1
// allows S = 0: src/core/compaction/rank-table-bytes.ts), written to dist/worker-rank-tables/,
// which functions/entries/worker-rank-tables.ts imports as Data modules. With the hash tables the
// upload was 2.9 MiB gzip, at the free plan's 3 MiB; without them ≈ 1.9 MiB, and an isolate
// computes the hash table when a count first needs the encoding (≈ 15–30 ms, once).
//
// Run by wrangler.toml's [build] command (infra/build/worker-build.mjs) before every
// `wrangler dev` and `wrangler deploy`, before the Worker is bundled. Plain Node ESM, so that it runs before anything is built.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))
const HEADER_BYTES = 16

/** Writes the slot-less tables into `outDir` (default dist/worker-rank-tables). */
export function writeWorkerRankTables(outDir = path.join(root, 'dist', 'worker-rank-tables')) {
  mkdirSync(outDir, { recursive: true })
  for (const encoding of ['o200k_base', 'cl100k_base']) {
    const table = readFileSync(
      path.join(root, 'src/core/compaction/rank-tables', `${encoding}.bin`),
    )
    const slotCount = table.readUInt32LE(12)
    const header = Buffer.from(table.subarray(0, HEADER_BYTES))
    header.writeUInt32LE(0, 12)
    const rest = table.subarray(HEADER_BYTES + slotCount * 4)
    writeFileSync(path.join(outDir, `${encoding}.bin`), Buffer.concat([header, rest]))
  }
}
