import type { RankTableSource } from '../../src/core/session-service.ts'

/**
 * The token counter's rank tables in the Worker: the committed
 * src/core/compaction/rank-tables/*.bin without their hash tables (written to
 * dist/worker-rank-tables/ by wrangler.toml's [build] command, infra/build/worker-rank-tables.mjs:
 * ≈ 1 MiB less to upload; `turnline-worker-rank-tables/*` names them for
 * infra/build/worker-bundle.mjs, which leaves them beside the chunks), uploaded beside the bundle as Data modules (an ArrayBuffer each,
 * nothing to compile or parse) and imported when a count first needs the encoding, which then
 * computes its hash table (≈ 15–30 ms for o200k, once per isolate).
 */
export const workerRankTables: RankTableSource = async (encoding) => {
  const table =
    encoding === 'cl100k_base'
      ? await import('turnline-worker-rank-tables/cl100k_base.bin')
      : await import('turnline-worker-rank-tables/o200k_base.bin')
  return new Uint8Array(table.default)
}
