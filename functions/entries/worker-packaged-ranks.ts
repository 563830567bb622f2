/**
 * `gpt-tokenizer/esm/bpeRanks/*` in the Worker bundle (wrangler.toml [alias]): the package's rank
 * literals (3.6 MB of JavaScript) are not uploaded, since the Worker reads the committed rank
 * tables (worker-rank-tables.ts, set by worker.ts before anything counts). Importing this is a
 * fault: a load that reached the package's ranks instead.
 */
function notInTheWorker(): never {
  throw new Error(
    "gpt-tokenizer's rank literals are not in the Worker bundle: it counts with the rank tables of worker-rank-tables.ts",
  )
}

export default notInTheWorker()
