/** Writes the Worker's rank tables (without hash tables) into `outDir` (default dist/worker-rank-tables). */
export function writeWorkerRankTables(outDir?: string): void
